"""ProtoJSON written from the models themselves equals ProtoJSON converted from their 0.3 JSON,
and the 1.0 SendMessage request read straight into the canonical model equals the request
converted from 0.3 JSON (the same parameters, or the same error)."""

from __future__ import annotations

import gc
import json
import os
import sys
from datetime import datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import to_json

import accord
from accord.codecs import protojson, protojson_models, v1_0
from accord.core.query import TaskPage
from accord.core.records import EventRecord
from accord.errors import InvalidParams
from accord.types import (
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    adapters,
)

PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

texts = st.text(max_size=12)
optional_texts = st.none() | texts
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
objects = st.dictionaries(texts, json_values, max_size=4)
metadata = st.none() | objects
optional_texts_list = st.none() | st.lists(texts, max_size=2)

files = st.builds(
    FileWithBytes, bytes=texts, mime_type=optional_texts, name=optional_texts
) | st.builds(FileWithUri, uri=texts, mime_type=optional_texts, name=optional_texts)
parts = (
    st.builds(TextPart, text=texts, metadata=metadata)
    | st.builds(FilePart, file=files, metadata=metadata)
    | st.builds(DataPart, data=objects, metadata=metadata)
)
messages = st.builds(
    Message,
    message_id=texts,
    role=st.sampled_from(Role),
    parts=st.lists(parts, max_size=3),
    context_id=optional_texts,
    task_id=optional_texts,
    reference_task_ids=optional_texts_list,
    extensions=optional_texts_list,
    metadata=metadata,
)
statuses = st.builds(
    TaskStatus,
    state=st.sampled_from(TaskState),
    message=st.none() | messages,
    timestamp=optional_texts,
)
artifacts = st.builds(
    Artifact,
    artifact_id=texts,
    parts=st.lists(parts, max_size=3),
    name=optional_texts,
    description=optional_texts,
    extensions=optional_texts_list,
    metadata=metadata,
)
tasks = st.builds(
    Task,
    id=texts,
    context_id=texts,
    status=statuses,
    artifacts=st.none() | st.lists(artifacts, max_size=2),
    history=st.none() | st.lists(messages, max_size=2),
    metadata=metadata,
)
status_updates = st.builds(
    TaskStatusUpdateEvent,
    task_id=texts,
    context_id=texts,
    status=statuses,
    final=st.booleans(),
    metadata=metadata,
)
artifact_updates = st.builds(
    TaskArtifactUpdateEvent,
    task_id=texts,
    context_id=texts,
    artifact=artifacts,
    append=st.none() | st.booleans(),
    last_chunk=st.none() | st.booleans(),
    metadata=metadata,
)


def converted_dict(converter: protojson.Converter, model: Any) -> dict[str, Any]:
    """The ProtoJSON of `model` the general way: converted from its 0.3 JSON."""
    return converter.to_v1(model.to_wire())


def converted(converter: protojson.Converter, model: Any) -> bytes:
    return to_json(converted_dict(converter, model))


@PROPERTY
@given(tasks | messages)
def test_a_send_result_read_from_the_model_is_the_converted_one(result: Task | Message) -> None:
    encoded = v1_0.send_message_result(result)
    assert encoded == converted(protojson.SEND_MESSAGE_RESPONSE, result)
    if isinstance(result, Task):
        assert v1_0.task_result(result) == converted(protojson.TASK, result)


@PROPERTY
@given(st.lists(tasks, max_size=3), texts)
def test_a_page_of_tasks_read_from_the_models_is_the_converted_one(
    listed: list[Task], token: str
) -> None:
    page = TaskPage(listed, token, 50, len(listed))
    expected = {
        "tasks": [converted_dict(protojson.TASK, task) for task in listed],
        "nextPageToken": token,
        "pageSize": 50,
        "totalSize": len(listed),
    }
    assert v1_0.list_tasks_result(page) == to_json(expected)


@PROPERTY
@given(tasks | messages | status_updates | artifact_updates)
def test_every_stream_event_read_from_the_model_is_the_converted_one(event: Any) -> None:
    encoded = protojson_models.write_member(protojson.STREAM_RESPONSE, event)
    assert encoded == converted(protojson.STREAM_RESPONSE, event)


@PROPERTY
@given(tasks | messages | status_updates | artifact_updates)
def test_a_stream_record_is_written_as_its_payload_converts(event: Any) -> None:
    record = EventRecord.of("t", 1, event, final=False)
    expected = converted(protojson.STREAM_RESPONSE, event)
    assert v1_0.stream_result(record) == expected
    assert v1_0.stream_result(record) is record.encodings[v1_0.STREAM_ENCODING]  # made once


@PROPERTY
@given(tasks | status_updates, st.datetimes().map(datetime.isoformat))
def test_a_local_status_time_is_written_as_the_converters_write_it(
    event: Task | TaskStatusUpdateEvent, local: str
) -> None:
    """A time without an offset (given its `Z`: see protojson.timestamp_to_v1)."""
    status = event.status.model_copy(update={"timestamp": local})
    event = event.model_copy(update={"status": status})
    encoded = protojson_models.write_member(protojson.STREAM_RESPONSE, event)
    assert encoded == converted(protojson.STREAM_RESPONSE, event)
    member = "task" if isinstance(event, Task) else "statusUpdate"
    assert json.loads(encoded)[member]["status"]["timestamp"] == f"{local}Z"


@PROPERTY
@given(tasks | messages)
def test_a_send_result_reads_back_as_itself(result: Task | Message) -> None:
    sent = json.loads(v1_0.send_message_result(result))
    received = adapters.SEND_RESULT.validate_python(
        protojson.SEND_MESSAGE_RESPONSE.from_v1(sent, "")
    )
    assert received.to_json() == result.to_json()


def test_a_subclass_keeps_the_fields_its_own_dump_has() -> None:
    class TaggedTask(Task):
        tag: str = "extra"

    task = TaggedTask(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    encoded = v1_0.task_result(task)
    assert encoded == converted(protojson.TASK, task)
    assert json.loads(encoded)["tag"] == "extra"


# --- SendMessage: a message alone skips validating the request around it ---------------------

v1_parts = st.fixed_dictionaries(
    {},
    optional={
        "text": json_values,
        "raw": json_values,
        "url": json_values,
        "data": json_values,
        "mediaType": json_values,
        "filename": json_values,
        "metadata": json_values,
        "media_type": json_values,
    },
)
v1_messages = st.fixed_dictionaries(
    {},
    optional={
        "messageId": texts | json_values,
        "message_id": texts,
        "role": st.sampled_from(["ROLE_USER", "ROLE_AGENT", "ROLE_UNSPECIFIED", 1, 2, "user"])
        | json_values,
        "parts": st.lists(v1_parts, max_size=3) | json_values,
        "contextId": optional_texts,
        "referenceTaskIds": optional_texts_list | json_values,
        "metadata": json_values,
        "kind": json_values,
    },
)


def outcome(params: dict[str, Any]) -> Any:
    try:
        return v1_0.send_message_request(params).to_wire()
    except InvalidParams as exc:
        return exc.message, exc.data


@PROPERTY
@given(v1_messages | json_values | messages.map(lambda m: json.loads(v1_0.send_message_result(m))))
def test_a_message_alone_decodes_as_the_validated_request_does(message: Any) -> None:
    if isinstance(message, dict) and "message" in message:  # a Message encoded as a result
        message = message["message"]
    # An unknown member (here a tenant, which this server does not route by) is validated.
    assert outcome({"message": message}) == outcome({"message": message, "tenant": "t"})


# --- SendMessage: read straight into the canonical model, or converted from 0.3 JSON ----------


def converted_outcome(params: dict[str, Any]) -> Any:
    try:
        return v1_0.converted_send_message_request(params).to_wire()
    except InvalidParams as exc:
        return exc.message, exc.data


v1_configurations = st.fixed_dictionaries(
    {},
    optional={
        "acceptedOutputModes": st.lists(texts, max_size=2) | json_values,
        "historyLength": st.none() | st.integers(-2, 5),
        "returnImmediately": st.booleans() | json_values,
        "taskPushNotificationConfig": st.fixed_dictionaries(
            {"url": texts}, optional={"token": optional_texts, "id": texts}
        )
        | json_values,
        "return_immediately": st.booleans(),
    },
)
v1_requests = st.fixed_dictionaries(
    {
        "message": v1_messages
        | messages.map(lambda m: json.loads(v1_0.send_message_result(m))["message"])
    },
    optional={
        "configuration": st.none() | v1_configurations | json_values,
        "metadata": metadata | json_values,
        "tenant": texts,
        "meta_data": objects,
    },
)


@PROPERTY
@given(v1_requests | json_values)
def test_a_send_message_request_reads_as_its_conversion_does(params: Any) -> None:
    assert outcome(params) == converted_outcome(params)


@given(messages)
@settings(max_examples=50, deadline=None)
def test_a_message_a_client_sends_is_read_straight_into_the_model(message: Message) -> None:
    sent = json.loads(v1_0.send_message_result(message))["message"]
    configuration = {"acceptedOutputModes": ["text/plain"], "returnImmediately": True}
    for params in ({"message": sent}, {"message": sent, "configuration": configuration}):
        read = v1_0._SEND_MESSAGE_PARAMS.validate_python(params)  # no fallback: no error
        assert type(read.message) is Message
        assert read.to_wire() == v1_0.converted_send_message_request(params).to_wire()


plain_messages = st.builds(
    Message,
    message_id=texts,
    role=st.sampled_from(Role),
    parts=st.lists(
        st.builds(TextPart, text=texts, metadata=metadata)
        | st.builds(DataPart, data=objects, metadata=metadata),
        max_size=3,
    ),
    context_id=optional_texts,
    task_id=optional_texts,
    reference_task_ids=optional_texts_list,
    metadata=metadata,
)


def accord_calls_reading(params: dict[str, Any]) -> list[str]:
    """accord's Python functions called while the params are read straight into the model
    (the garbage collector held off: a finalizer it ran would count too)."""
    called: list[str] = []
    source = os.path.dirname(accord.__file__)

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(source):
            called.append(frame.f_code.co_qualname)

    gc.disable()
    sys.setprofile(profile)
    try:
        v1_0._SEND_MESSAGE_PARAMS.validate_python(params)
    finally:
        sys.setprofile(None)
        gc.enable()
    return called


@given(plain_messages, st.sampled_from([None, 1, 2]))
@settings(max_examples=50, deadline=None)
def test_a_message_of_text_and_data_is_read_without_a_python_call(
    message: Message, role_number: int | None
) -> None:
    """pydantic-core makes the models and looks the role up itself: the common request costs
    no call back into Python (a file part, flattened in 1.0, still takes one)."""
    sent = json.loads(v1_0.send_message_result(message))["message"]
    if role_number is not None:
        sent["role"] = role_number
    assert accord_calls_reading({"message": sent}) == []
