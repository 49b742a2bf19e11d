"""The A2A 0.3 JSON-RPC codec without a server: each method's params, results and the errors."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accord.codecs import JSONRPC_CODECS, ProtocolVersion
from accord.codecs.v0_3 import CLIENT
from accord.core.records import EventRecord
from accord.errors import (
    A2AError,
    ExtensionSupportRequired,
    InvalidParams,
    InvalidRequest,
    TaskNotCancelable,
    TaskNotFound,
    VersionNotSupported,
)
from accord.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    DataPart,
    DeleteTaskPushNotificationConfigParams,
    FilePart,
    FileWithBytes,
    FileWithUri,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    TaskIdParams,
    TaskQueryParams,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from codec_checks import (
    HOOK,
    PUSH_CONFIG,
    QUESTION,
    TASK,
    Methods,
    assert_readable,
    invalid,
    parsed,
)

CODEC = JSONRPC_CODECS[ProtocolVersion.V0_3]
Json = dict[str, Any]


METHODS = Methods(CODEC.methods)
decode, encode = METHODS.decode, METHODS.encode


# --- params ----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["message/send", "message/stream"])
def test_send_params_are_the_canonical_send_params(method: str) -> None:
    wire = {
        "message": QUESTION.to_wire(),
        "configuration": {"blocking": False, "historyLength": 2, "acceptedOutputModes": ["a/b"]},
        "metadata": {"k": "v"},
    }
    assert decode(method, wire) == MessageSendParams(
        message=QUESTION,
        configuration=MessageSendConfiguration(
            blocking=False, history_length=2, accepted_output_modes=["a/b"]
        ),
        metadata={"k": "v"},
    )


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "message"),
        ({"message": {**QUESTION.to_wire(), "messageId": None}}, "message.messageId"),
        ({"message": {**QUESTION.to_wire(), "role": "robot"}}, "message.role"),
        (
            {"message": {**QUESTION.to_wire(), "parts": [{"kind": "text"}]}},
            "message.parts.0.text",
        ),
        (
            {"message": QUESTION.to_wire(), "configuration": {"historyLength": -1}},
            "configuration.historyLength",
        ),
    ],
)
def test_bad_send_params_name_the_field(params: Json, field: str) -> None:
    with invalid(field):
        decode("message/send", params)


# --- parts without `kind` ----------------------------------------------------------------------

PART_SETTINGS = settings(max_examples=200, deadline=None, database=None)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
objects = st.dictionaries(st.text(max_size=6), json_values, max_size=3)
metadata = st.one_of(st.none(), objects)
optional_texts = st.one_of(st.none(), st.text(max_size=12))
base64_texts = st.binary(max_size=24).map(lambda raw: base64.b64encode(raw).decode())
canonical_parts = st.one_of(
    st.builds(TextPart, text=st.text(max_size=20), metadata=metadata),
    st.builds(
        FilePart,
        file=st.one_of(
            st.builds(FileWithBytes, bytes=base64_texts, name=optional_texts,
                      mime_type=optional_texts),
            st.builds(FileWithUri, uri=st.text(min_size=1, max_size=20), name=optional_texts,
                      mime_type=optional_texts),
        ),
        metadata=metadata,
    ),
    st.builds(DataPart, data=objects, metadata=metadata),
)  # fmt: skip


def _sent(*parts: Any) -> Any:
    """The message/send params carrying `parts`, decoded; the parts as the server reads them."""
    message = {**QUESTION.to_wire(), "parts": list(parts)}
    return decode("message/send", {"message": message}).message.parts


@PART_SETTINGS
@given(st.lists(canonical_parts, min_size=1, max_size=3), st.data())
def test_a_0_3_part_without_kind_reads_as_the_part_its_fields_say(
    parts: list[Any], data: st.DataObject
) -> None:
    wire = [part.to_wire() for part in parts]
    for sent in wire:
        if data.draw(st.booleans()):
            del sent["kind"]
    assert _sent(*wire) == parts


@st.composite
def parts_of_1_0(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    """A part in 1.0's shape (no `kind`; text, raw, url or data) and the part it stands for."""
    member = draw(st.sampled_from(["text", "raw", "url", "data"]))
    value: Any = draw(
        {"text": st.text(max_size=20), "raw": base64_texts, "data": objects}.get(
            member, st.text(min_size=1, max_size=20)
        )
    )
    part: dict[str, Any] = {member: value}
    described = {
        key: draw(st.text(max_size=12)) for key in ("filename", "mediaType") if draw(st.booleans())
    }
    part.update(described)
    meta = draw(metadata)
    if meta is not None:
        part["metadata"] = meta
    name, media_type = described.get("filename"), described.get("mediaType")
    expected: Any
    if member == "text":
        expected = TextPart(text=value, metadata=meta)  # 0.3 has no name or type for text
    elif member == "data":
        expected = DataPart(data=value, metadata=meta)
    elif member == "raw":
        file = FileWithBytes(bytes=value, name=name, mime_type=media_type)
        expected = FilePart(file=file, metadata=meta)
    else:
        expected = FilePart(
            file=FileWithUri(uri=value, name=name, mime_type=media_type), metadata=meta
        )
    return part, expected


@PART_SETTINGS
@given(st.lists(parts_of_1_0(), min_size=1, max_size=3))
def test_a_part_in_the_1_0_shape_reads_as_its_0_3_part(
    sent: list[tuple[dict[str, Any], Any]],
) -> None:
    assert _sent(*(part for part, _ in sent)) == [expected for _, expected in sent]


part_fields = st.sampled_from(
    ["text", "file", "data", "raw", "url", "filename", "mediaType", "metadata", "bytes", "uri"]
)


@PART_SETTINGS
@given(st.dictionaries(st.one_of(part_fields, st.text(max_size=6)), json_values, max_size=4))
def test_any_part_without_kind_is_read_or_refused_in_words(part: dict[str, Any]) -> None:
    part.pop("kind", None)
    try:
        _sent(part)
    except InvalidParams as exc:
        assert_readable(exc)
        assert all(p["field"].startswith("message.parts.0") for p in exc.data), exc.data


@PART_SETTINGS
@given(json_values)
def test_any_send_params_are_read_or_refused_in_words(params: Any) -> None:
    message = {**QUESTION.to_wire(), "parts": [params]}
    for sent in (params, {"message": params}, {"message": message}, {"configuration": params}):
        try:
            decode("message/send", sent)
        except InvalidParams as exc:
            assert_readable(exc)


@pytest.mark.parametrize(
    ("parts", "field", "message"),
    [
        ([{}], "message.parts.0", 'needs "kind" ("text", "file" or "data"), or exactly one of'),
        ([{"text": "a", "data": {}}], "message.parts.0", "it holds text and data"),
        ([{"kind": "txt", "text": "a"}], "message.parts.0", "kind 'txt' is not one of 'text', "),
        ([{"kind": "text"}], "message.parts.0.text", "is required"),
        ([{"kind": "file", "file": {}}], "message.parts.0.file", "needs bytes or uri"),
        ([{"kind": "file", "file": {"bytes": 5}}], "message.parts.0.file.bytes", "must be a str"),
        ([{"file": {"uri": 5}}], "message.parts.0.file.uri", "must be a string"),
        ([{"kind": "data", "data": [1]}], "message.parts.0.data", "must be an object"),
        ([{"raw": 5}], "message.parts.0.raw", "must be a string"),
        ([{"url": "u", "filename": 3}], "message.parts.0.filename", "must be a string"),
        ("all", "message.parts", "must be a list"),
    ],
)
def test_a_bad_part_is_refused_in_words_naming_its_field(
    parts: Any, field: str, message: str
) -> None:
    with invalid(field) as caught:
        decode("message/send", {"message": {**QUESTION.to_wire(), "parts": parts}})
    assert [problem["field"] for problem in caught.value.data] == [field]
    assert caught.value.message.startswith(f"{field}: "), caught.value.message
    assert message in caught.value.message
    assert_readable(caught.value)


@pytest.mark.parametrize(
    ("method", "params", "expected"),
    [
        ("tasks/get", {"id": "t", "historyLength": 1}, TaskQueryParams(id="t", history_length=1)),
        ("tasks/cancel", {"id": "t"}, TaskIdParams(id="t")),
        ("tasks/resubscribe", {"id": "t"}, TaskIdParams(id="t")),
        (
            "tasks/pushNotificationConfig/set",
            {"taskId": "t", "pushNotificationConfig": {"id": "h", "url": HOOK, "token": "tok"}},
            PUSH_CONFIG,
        ),
        (
            "tasks/pushNotificationConfig/get",
            {"id": "t", "pushNotificationConfigId": "h"},
            GetTaskPushNotificationConfigParams(id="t", push_notification_config_id="h"),
        ),
        (
            "tasks/pushNotificationConfig/list",
            {"id": "t"},
            ListTaskPushNotificationConfigParams(id="t"),
        ),
        (
            "tasks/pushNotificationConfig/delete",
            {"id": "t", "pushNotificationConfigId": "h"},
            DeleteTaskPushNotificationConfigParams(id="t", push_notification_config_id="h"),
        ),
        ("agent/getAuthenticatedExtendedCard", None, None),
        ("agent/getAuthenticatedExtendedCard", {}, None),
    ],
)
def test_task_params_are_the_canonical_params(method: str, params: Any, expected: Any) -> None:
    assert decode(method, params) == expected


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("tasks/get", {}, "id"),
        ("tasks/get", {"id": "t", "historyLength": "many"}, "historyLength"),
        ("tasks/cancel", {"id": 7}, "id"),
        ("tasks/resubscribe", {"taskId": "t"}, "id"),
        ("tasks/pushNotificationConfig/set", {"taskId": "t"}, "pushNotificationConfig"),
        (
            "tasks/pushNotificationConfig/set",
            {"taskId": "t", "pushNotificationConfig": {"id": "h"}},
            "pushNotificationConfig.url",
        ),
        ("tasks/pushNotificationConfig/get", {"pushNotificationConfigId": "h"}, "id"),
        ("tasks/pushNotificationConfig/list", {}, "id"),
        ("tasks/pushNotificationConfig/delete", {"id": "t"}, "pushNotificationConfigId"),
    ],
)
def test_bad_task_params_name_the_field(method: str, params: Json, field: str) -> None:
    with invalid(field):
        decode(method, params)


@pytest.mark.parametrize(
    "method", sorted(set(CODEC.methods) - {"agent/getAuthenticatedExtendedCard"})
)
@pytest.mark.parametrize("params", [None, [], ["t"], "t"])
def test_params_must_be_an_object(method: str, params: Any) -> None:
    with pytest.raises(InvalidParams, match="params must be an object"):
        decode(method, params)


def test_the_extended_card_takes_no_params() -> None:
    with pytest.raises(InvalidParams, match="takes no params"):
        decode("agent/getAuthenticatedExtendedCard", {"verbose": True})


# --- results ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["message/send", "tasks/get", "tasks/cancel"])
def test_a_task_result_is_its_canonical_json(method: str) -> None:
    assert encode(method, TASK) == TASK.to_wire()
    assert encode(method, TASK)["kind"] == "task"


def test_a_message_result_is_its_canonical_json() -> None:
    reply = Message.agent("hello", context_id="c")
    assert encode("message/send", reply) == {**reply.to_wire(), "kind": "message"}


def test_push_config_results() -> None:
    wire = {"taskId": "t", "pushNotificationConfig": {"id": "h", "url": HOOK, "token": "tok"}}
    for method in ("tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get"):
        assert encode(method, PUSH_CONFIG) == wire
    assert encode("tasks/pushNotificationConfig/list", [PUSH_CONFIG, PUSH_CONFIG]) == [wire, wire]
    assert encode("tasks/pushNotificationConfig/list", []) == []
    assert encode("tasks/pushNotificationConfig/delete", None) is None


@pytest.mark.parametrize("method", ["message/stream", "tasks/resubscribe"])
def test_a_stream_event_is_the_records_payload(method: str) -> None:
    event = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING), final=False
    )
    record = EventRecord.of("t", 2, event, final=False)
    assert CODEC.methods[method].streaming
    assert CODEC.methods[method].encode(record) == record.payload
    assert parsed(record.payload) == event.to_wire()


def test_the_extended_card_is_a_0_3_card_without_what_1_0_added() -> None:
    card = AgentCard(
        name="Agent",
        description="d",
        url="https://agent.example.com/",
        version="1",
        capabilities=AgentCapabilities(),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[],
        supported_interfaces=[
            AgentInterface(url="https://agent.example.com/", transport="JSONRPC")
        ],
    )
    wire = encode("agent/getAuthenticatedExtendedCard", card)
    assert "supportedInterfaces" not in wire
    assert (wire["name"], wire["url"]) == ("Agent", "https://agent.example.com/")


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        TaskNotFound("no task t"),
        TaskNotCancelable("t is completed", data={"state": "completed"}),
        VersionNotSupported("speak 0.3"),
        InvalidParams("id: required", data=[{"field": "id", "message": "required"}]),
    ],
)
def test_an_error_is_its_code_message_and_data(error: A2AError) -> None:
    expected: Json = {"code": error.code, "message": error.message}
    if error.data is not None:
        expected["data"] = error.data
    assert parsed(CODEC.error(error)) == expected


def test_a_missing_extension_is_an_invalid_request_in_0_3() -> None:
    error = parsed(CODEC.error(ExtensionSupportRequired("needs ext")))
    assert error == {"code": InvalidRequest.code, "message": "needs ext"}


# --- the client's tables ---------------------------------------------------------------------


def test_the_client_sends_the_canonical_json_and_reads_it_back() -> None:
    params = MessageSendParams(message=QUESTION)
    assert CLIENT.send.name == "message/send"
    assert CLIENT.send.encode(params) == params.to_wire()
    assert CLIENT.send.decode(TASK.to_wire()) == TASK
    assert CLIENT.get_task.decode(TASK.to_wire()) == TASK
    assert CLIENT.list_push_configs.decode([PUSH_CONFIG.to_wire()]) == [PUSH_CONFIG]
    assert CLIENT.get_extended_card.encode(None) is None
    assert CLIENT.list_tasks is None


def test_the_client_reads_an_error_object_as_its_a2a_error() -> None:
    error = CLIENT.error({"code": -32001, "message": "no task t", "data": {"id": "t"}})
    assert isinstance(error, TaskNotFound)
    assert (error.message, error.data) == ("no task t", {"id": "t"})
