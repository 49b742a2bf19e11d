"""The A2A 1.0 codec without a server: ProtoJSON <-> 0.3 shapes, requests, results, errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accord.codecs import error_details, protojson, protojson_v0_3, v1_0
from accord.errors import (
    A2AError,
    AuthenticatedExtendedCardNotConfigured,
    ContentTypeNotSupported,
    ExtensionSupportRequired,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    MethodNotFound,
    PushNotificationNotSupported,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
    VersionNotSupported,
)
from accord.runtime import EventRecord
from accord.store import TaskPage
from accord.types import (
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Message,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from codec_checks import invalid
from rpc_v1_0 import assert_valid_v1

Json = dict[str, Any]

TIME = "2026-01-02T03:04:05.678Z"

MESSAGE = Message(
    message_id="m-1",
    role=Role.AGENT,
    context_id="ctx",
    task_id="task",
    reference_task_ids=["earlier"],
    extensions=["https://example.com/ext"],
    metadata={"trace": "abc"},
    parts=[
        TextPart(text="hello", metadata={"lang": "en"}),
        FilePart(file=FileWithBytes(bytes="aGk=", mime_type="text/plain", name="hi.txt")),
        FilePart(file=FileWithUri(uri="https://example.com/a.png", mime_type="image/png")),
        DataPart(data={"answer": 42, "nested": {"snake_case": True}}),
    ],
)
MESSAGE_V1: Json = {
    "messageId": "m-1",
    "role": "ROLE_AGENT",
    "contextId": "ctx",
    "taskId": "task",
    "referenceTaskIds": ["earlier"],
    "extensions": ["https://example.com/ext"],
    "metadata": {"trace": "abc"},
    "parts": [
        {"text": "hello", "metadata": {"lang": "en"}},
        {"raw": "aGk=", "mediaType": "text/plain", "filename": "hi.txt"},
        {"url": "https://example.com/a.png", "mediaType": "image/png"},
        {"data": {"answer": 42, "nested": {"snake_case": True}}},
    ],
}
TASK = Task(
    id="task",
    context_id="ctx",
    status=TaskStatus(state=TaskState.INPUT_REQUIRED, message=MESSAGE, timestamp=TIME),
    artifacts=[Artifact(artifact_id="a", name="out", parts=[TextPart(text="result")])],
    history=[Message.user("question", context_id="ctx", task_id="task")],
    metadata={"k": "v"},
)
STATUS_UPDATE = TaskStatusUpdateEvent(
    task_id="task",
    context_id="ctx",
    status=TaskStatus(state=TaskState.COMPLETED, timestamp=TIME),
    final=True,
)
ARTIFACT_UPDATE = TaskArtifactUpdateEvent(
    task_id="task",
    context_id="ctx",
    artifact=Artifact(artifact_id="a", parts=[TextPart(text="chunk")]),
    append=True,
    last_chunk=False,
)


# --- data objects ---------------------------------------------------------------------------


def test_message_becomes_protojson() -> None:
    assert protojson.MESSAGE.to_v1(MESSAGE.to_wire()) == MESSAGE_V1
    assert_valid_v1("Message", MESSAGE_V1)


def test_protojson_message_becomes_the_same_canonical_message() -> None:
    assert Message.model_validate(protojson.MESSAGE.from_v1(MESSAGE_V1, "message")) == MESSAGE


def test_task_and_its_nested_objects_round_trip() -> None:
    wire = protojson.TASK.to_v1(TASK.to_wire())
    assert "kind" not in wire
    assert wire["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert wire["status"]["message"]["role"] == "ROLE_AGENT"
    assert wire["history"][0]["role"] == "ROLE_USER"
    assert wire["artifacts"][0]["parts"] == [{"text": "result"}]
    assert_valid_v1("Task", wire)
    assert Task.model_validate(protojson.TASK.from_v1(wire, "task")) == TASK


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("2026-01-31T12:00:00.123456", "2026-01-31T12:00:00.123456Z"),
        ("2026-01-31T12:00:00.123Z", "2026-01-31T12:00:00.123Z"),
        ("2026-01-31T12:00:00+02:00", "2026-01-31T12:00:00+02:00"),
        ("2026-01-31T12:00:00+02", "2026-01-31T12:00:00+02"),
        ("2026-01-31", "2026-01-31"),
        ("yesterday", "yesterday"),
    ],
)
def test_a_status_time_without_an_offset_is_written_as_utc(written: str, read: str) -> None:
    """A Timestamp names its offset; some agents (FastA2A) write local times without one."""
    assert protojson.timestamp_to_v1(written) == read


@given(st.text())
def test_any_status_time_is_kept_or_given_its_z(written: str) -> None:
    assert protojson.timestamp_to_v1(written) in (written, written + "Z")


@given(st.datetimes(), st.timedeltas(timedelta(hours=-23), timedelta(hours=23)))
def test_only_a_local_time_is_given_its_z(moment: datetime, offset: timedelta) -> None:
    local = moment.isoformat()
    assert datetime.fromisoformat(protojson.timestamp_to_v1(local)) == moment.replace(tzinfo=UTC)
    aware = moment.replace(tzinfo=timezone(offset)).isoformat()
    assert protojson.timestamp_to_v1(aware) == aware


def test_a_local_status_time_reads_as_utc_in_protojson_only() -> None:
    local = "2026-01-31T12:00:00.123456"
    task = Task(id="t", context_id="c", status=TaskStatus(state="working", timestamp=local))
    assert task.status.timestamp == local
    assert task.to_wire()["status"]["timestamp"] == local  # 0.3 JSON: the agent's string
    assert json.loads(v1_0.task_result(task))["status"]["timestamp"] == f"{local}Z"
    assert protojson.TASK.to_v1(task.to_wire())["status"]["timestamp"] == f"{local}Z"
    # 0.3's proto (its HTTP+JSON and gRPC) has the same Timestamp
    assert protojson_v0_3.TASK.to_v1(task.to_wire())["status"]["timestamp"] == f"{local}Z"


@pytest.mark.parametrize("state", list(TaskState))
def test_every_task_state_has_its_proto_name(state: TaskState) -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=state))
    wire = protojson.TASK.to_v1(task.to_wire())
    expected = (
        "UNSPECIFIED" if state is TaskState.UNKNOWN else state.value.upper().replace("-", "_")
    )
    assert wire["status"]["state"] == f"TASK_STATE_{expected}"
    assert_valid_v1("Task", wire)
    assert Task.model_validate(protojson.TASK.from_v1(wire, "")).status.state is state


def test_enum_numbers_are_accepted_on_input() -> None:
    wire = {**MESSAGE_V1, "role": 1}
    assert protojson.MESSAGE.from_v1(wire, "message")["role"] == "user"
    assert protojson.TASK_STATE.from_v1(6, "status") == "input-required"


@pytest.mark.parametrize("role", ["user", "ROLE_UNSPECIFIED", 0, 3, True, ["ROLE_USER"]])
def test_a_role_that_is_not_a_1_0_role_is_invalid_params(role: Any) -> None:
    with invalid("message.role"):
        protojson.MESSAGE.from_v1({**MESSAGE_V1, "role": role}, "message")


def test_proto_field_names_are_accepted_too() -> None:
    wire = {
        "message_id": "m",
        "role": "ROLE_USER",
        "reference_task_ids": ["x"],
        "parts": [{"url": "u", "media_type": "image/png"}],
        "metadata": {"keep_me": "as is"},
    }
    message = Message.model_validate(protojson.MESSAGE.from_v1(wire, "message"))
    assert message.message_id == "m"
    assert message.reference_task_ids == ["x"]
    part = message.parts[0]
    assert isinstance(part, FilePart) and part.file.mime_type == "image/png"
    assert message.metadata == {"keep_me": "as is"}


def test_null_members_mean_unset() -> None:
    wire = {**MESSAGE_V1, "contextId": None, "parts": [{"text": "hi", "raw": None}]}
    message = Message.model_validate(protojson.MESSAGE.from_v1(wire, "message"))
    assert message.context_id is None
    assert message.parts == [TextPart(text="hi")]


def test_unknown_members_are_ignored() -> None:
    wire = {**MESSAGE_V1, "futureField": 1, "parts": [{"text": "hi", "fancy": True}]}
    message = Message.model_validate(protojson.MESSAGE.from_v1(wire, "message"))
    assert message.parts == [TextPart(text="hi")]


def test_media_type_of_a_text_part_is_dropped() -> None:
    part = protojson.PART.from_v1({"text": "hi", "mediaType": "text/markdown"}, "p")
    assert part == {"kind": "text", "text": "hi"}


@pytest.mark.parametrize(
    ("part", "field", "says"),
    [
        ({}, "m.parts.0", "exactly one of text, raw, url or data"),
        ({"metadata": {}}, "m.parts.0", "exactly one"),
        ({"text": "a", "url": "b"}, "m.parts.0", "found text, url"),
        ({"text": 5}, "m.parts.0.text", "string"),
        ({"raw": ["x"]}, "m.parts.0.raw", "string"),
        ({"url": "u", "filename": 3}, "m.parts.0.filename", "string"),
        ({"url": "u", "mediaType": {}}, "m.parts.0.mediaType", "string"),
        ({"data": [1, 2]}, "m.parts.0.data", "JSON objects"),
        ({"data": "text"}, "m.parts.0.data", "JSON objects"),
        ({"text": "a", "metadata": "x"}, "m.parts.0.metadata", "object"),
        ("just text", "m.parts.0", "object"),
    ],
)
def test_bad_parts_are_invalid_params_naming_the_field(part: Any, field: str, says: str) -> None:
    with invalid(field) as caught:
        protojson.MESSAGE.from_v1({**MESSAGE_V1, "parts": [part]}, "m")
    assert says in caught.value.message


def test_parts_that_are_not_a_list_are_invalid_params() -> None:
    with invalid("message.parts"):
        protojson.MESSAGE.from_v1({**MESSAGE_V1, "parts": {"text": "hi"}}, "message")


def test_status_update_drops_final_and_derives_it_back() -> None:
    wire = protojson.STATUS_UPDATE.to_v1(STATUS_UPDATE.to_wire())
    assert "final" not in wire and "kind" not in wire
    assert_valid_v1("TaskStatusUpdateEvent", wire)
    assert TaskStatusUpdateEvent.model_validate(protojson.STATUS_UPDATE.from_v1(wire, "")).final
    working = {**wire, "status": {"state": "TASK_STATE_WORKING"}}
    assert protojson.STATUS_UPDATE.from_v1(working, "")["final"] is False


@pytest.mark.parametrize(
    ("event", "member", "definition"),
    [
        (TASK, "task", "Task"),
        (MESSAGE, "message", "Message"),
        (STATUS_UPDATE, "statusUpdate", "TaskStatusUpdateEvent"),
        (ARTIFACT_UPDATE, "artifactUpdate", "TaskArtifactUpdateEvent"),
    ],
)
def test_stream_response_wraps_each_event_in_its_member(
    event: Any, member: str, definition: str
) -> None:
    wire = protojson.STREAM_RESPONSE.to_v1(event.to_wire())
    assert list(wire) == [member]
    assert_valid_v1("StreamResponse", wire)
    assert_valid_v1(definition, wire[member])
    assert type(event).model_validate(protojson.STREAM_RESPONSE.from_v1(wire, "")) == event


@pytest.mark.parametrize("wrapper", [{}, {"task": {}, "message": {}}, {"kind": "task"}])
def test_stream_response_must_hold_exactly_one_member(wrapper: Json) -> None:
    with invalid("result"):
        protojson.STREAM_RESPONSE.from_v1(wrapper, "")


def test_send_message_response_wraps_a_task_or_a_message() -> None:
    for result, member in ((TASK, "task"), (MESSAGE, "message")):
        wire = json.loads(v1_0.send_message_result(result))
        assert list(wire) == [member]
        assert_valid_v1("SendMessageResponse", wire)


# --- requests -------------------------------------------------------------------------------


def test_send_message_request_with_every_option() -> None:
    params = v1_0.send_message_request(
        {
            "tenant": "ignored",
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
            "configuration": {
                "acceptedOutputModes": ["text/plain"],
                "historyLength": 3,
                "returnImmediately": True,
                "taskPushNotificationConfig": {
                    "url": "https://client.example.com/hook",
                    "token": "tok",
                    "authentication": {"scheme": "Bearer", "credentials": "secret"},
                },
            },
            "metadata": {"m": 1},
        }
    )
    assert params.message.text == "hi" and params.message.role is Role.USER
    assert params.metadata == {"m": 1}
    configuration = params.configuration
    assert configuration is not None
    assert configuration.blocking is False
    assert configuration.history_length == 3
    assert configuration.accepted_output_modes == ["text/plain"]
    assert configuration.push_notification_config == PushNotificationConfig(
        url="https://client.example.com/hook",
        token="tok",
        authentication=PushNotificationAuthenticationInfo(schemes=["Bearer"], credentials="secret"),
    )


def test_send_message_blocks_by_default() -> None:
    params = v1_0.send_message_request({"message": MESSAGE_V1, "configuration": {}})
    assert params.configuration is not None and params.configuration.blocking is True


def with_configuration(**configuration: Any) -> Json:
    return {"message": MESSAGE_V1, "configuration": configuration}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "message"),
        ({"message": "hi"}, "message"),
        ({"message": {**MESSAGE_V1, "messageId": None}}, "message.messageId"),
        ({"message": {**MESSAGE_V1, "parts": {"text": "hi"}}}, "message.parts"),
        (with_configuration(historyLength=-1), "configuration.historyLength"),
        (with_configuration(returnImmediately="soon"), "configuration.returnImmediately"),
        (
            with_configuration(taskPushNotificationConfig={}),
            "configuration.taskPushNotificationConfig.url",
        ),
        ({"message": MESSAGE_V1, "metadata": [1]}, "metadata"),
    ],
)
def test_bad_send_message_requests_name_the_field(params: Json, field: str) -> None:
    with invalid(field):
        v1_0.send_message_request(params)


def test_a_0_3_send_payload_is_invalid_params() -> None:
    legacy = {
        "message": {
            "kind": "message",
            "messageId": "m",
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}],
        },
        "configuration": {"blocking": False},
    }
    with invalid("message.role"):
        v1_0.send_message_request(legacy)


@pytest.mark.parametrize("params", [None, [1], "x"])
def test_params_must_be_an_object(params: Any) -> None:
    with invalid("params"):
        v1_0.send_message_request(params)


def test_list_tasks_request_defaults() -> None:
    listing = v1_0.list_tasks_request({})
    assert listing.query.page_size == 50
    assert listing.query.context_id is None and listing.query.state is None
    assert listing.query.updated_after is None and listing.query.page_token is None
    assert listing.history_length is None
    assert listing.include_artifacts is False


def test_list_tasks_request_with_every_filter() -> None:
    listing = v1_0.list_tasks_request(
        {
            "contextId": "ctx",
            "status": "TASK_STATE_WORKING",
            "statusTimestampAfter": "2026-01-02T03:04:05Z",
            "pageSize": "10",
            "pageToken": "abc",
            "historyLength": 2,
            "includeArtifacts": True,
        }
    )
    query = listing.query
    assert (query.context_id, query.state, query.page_size, query.page_token) == (
        "ctx",
        TaskState.WORKING,
        10,
        "abc",
    )
    assert query.updated_after is not None and query.updated_after.isoformat() == (
        "2026-01-02T03:04:05+00:00"
    )
    assert (listing.history_length, listing.include_artifacts) == (2, True)


@pytest.mark.parametrize("status", ["TASK_STATE_UNSPECIFIED", 0, ""])
def test_unspecified_status_means_no_filter(status: Any) -> None:
    assert v1_0.list_tasks_request({"status": status}).query.state is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"pageSize": 0}, "pageSize"),
        ({"pageSize": 101}, "pageSize"),
        ({"pageSize": -5}, "pageSize"),
        ({"pageSize": "ten"}, "pageSize"),
        ({"historyLength": -1}, "historyLength"),
        ({"status": "TASK_STATE_RUNNING"}, "status"),
        ({"status": "working"}, "status"),
        ({"status": 42}, "status"),
        ({"statusTimestampAfter": "yesterday"}, "statusTimestampAfter"),
        ({"includeArtifacts": "maybe"}, "includeArtifacts"),
        ({"contextId": 7}, "contextId"),
    ],
)
def test_bad_list_tasks_requests_name_the_field(params: Json, field: str) -> None:
    with invalid(field):
        v1_0.list_tasks_request(params)


def test_push_config_requests_map_onto_the_canonical_params() -> None:
    created = v1_0.create_push_config_request(
        {"taskId": "t", "id": "c", "url": "https://h", "authentication": {"scheme": "Basic"}}
    )
    assert created.task_id == "t"
    assert created.push_notification_config.id == "c"
    assert created.push_notification_config.authentication is not None
    assert created.push_notification_config.authentication.schemes == ["Basic"]
    got = v1_0.get_push_config_request({"taskId": "t", "id": "c"})
    assert (got.id, got.push_notification_config_id) == ("t", "c")
    deleted = v1_0.delete_push_config_request({"task_id": "t", "id": "c"})
    assert (deleted.id, deleted.push_notification_config_id) == ("t", "c")
    assert v1_0.list_push_configs_request({"taskId": "t", "pageSize": 5}).id == "t"


@pytest.mark.parametrize(
    ("decode", "params", "field"),
    [
        (v1_0.create_push_config_request, {"url": "https://h"}, "taskId"),
        (v1_0.create_push_config_request, {"taskId": "t"}, "url"),
        (
            v1_0.create_push_config_request,
            {"taskId": "t", "url": "u", "authentication": {}},
            "authentication.scheme",
        ),
        (v1_0.get_push_config_request, {"taskId": "t"}, "id"),
        (v1_0.delete_push_config_request, {"id": "c"}, "taskId"),
        (v1_0.list_push_configs_request, {}, "taskId"),
        (v1_0.get_task_request, {"id": "t", "historyLength": -2}, "historyLength"),
        (v1_0.task_id_request, {"id": 5}, "id"),
    ],
)
def test_bad_task_requests_name_the_field(decode: Any, params: Json, field: str) -> None:
    with invalid(field):
        decode(params)


def test_get_extended_card_takes_nothing_or_a_tenant() -> None:
    assert v1_0.get_extended_card_request(None) is None
    assert v1_0.get_extended_card_request({"tenant": "x"}) is None
    with invalid("params"):
        v1_0.get_extended_card_request(["x"])


# --- results --------------------------------------------------------------------------------


def test_push_config_result_is_flat() -> None:
    config = TaskPushNotificationConfig(
        task_id="t",
        push_notification_config=PushNotificationConfig(
            url="https://h",
            id="c",
            token="tok",
            authentication=PushNotificationAuthenticationInfo(schemes=["Bearer", "Basic"]),
        ),
    )
    wire = json.loads(v1_0.push_config_result(config))
    assert wire == {
        "id": "c",
        "taskId": "t",
        "url": "https://h",
        "token": "tok",
        "authentication": {"scheme": "Bearer"},
    }
    assert_valid_v1("TaskPushNotificationConfig", wire)
    listed = json.loads(v1_0.push_configs_result([config, config]))
    assert listed == {"configs": [wire, wire], "nextPageToken": ""}
    assert_valid_v1("ListTaskPushNotificationConfigsResponse", listed)


def test_list_tasks_result() -> None:
    page = TaskPage(tasks=[TASK], next_page_token="next", page_size=1, total_size=3)
    wire = json.loads(v1_0.list_tasks_result(page))
    assert wire["nextPageToken"] == "next"
    assert (wire["pageSize"], wire["totalSize"]) == (1, 3)
    assert wire["tasks"][0]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert_valid_v1("ListTasksResponse", wire)
    last = json.loads(v1_0.list_tasks_result(TaskPage([], "", 50, 0)))
    assert last == {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}


def test_stream_result_converts_the_payload_once_per_record() -> None:
    task = TASK.model_copy(deep=True)
    record = EventRecord.of(task.id, 1, task, final=False)
    # The record's event is the live task: changes after the snapshot must not show in it.
    task.status = TaskStatus(state=TaskState.COMPLETED)
    first = v1_0.stream_result(record)
    assert json.loads(first)["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert v1_0.stream_result(record) is first, "converted once, then reused"
    assert record.encodings == {v1_0.STREAM_ENCODING: first}
    assert record.payload == TASK.to_json(), "the 0.3 payload is untouched"


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (TaskNotFound(), "TASK_NOT_FOUND"),
        (TaskNotCancelable(), "TASK_NOT_CANCELABLE"),
        (PushNotificationNotSupported(), "PUSH_NOTIFICATION_NOT_SUPPORTED"),
        (UnsupportedOperation(), "UNSUPPORTED_OPERATION"),
        (ContentTypeNotSupported(), "CONTENT_TYPE_NOT_SUPPORTED"),
        (InvalidAgentResponse(), "INVALID_AGENT_RESPONSE"),
        (AuthenticatedExtendedCardNotConfigured(), "EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
        (ExtensionSupportRequired(), "EXTENSION_SUPPORT_REQUIRED"),
        (VersionNotSupported(), "VERSION_NOT_SUPPORTED"),
    ],
)
def test_a2a_errors_carry_error_info(error: A2AError, reason: str) -> None:
    assert json.loads(v1_0.V10Codec().error(error)) == {
        "code": error.code,
        "message": error.message,
        "data": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "a2a-protocol.org",
            }
        ],
    }


def test_string_data_of_an_a2a_error_becomes_error_info_metadata() -> None:
    error = TaskNotFound("no task 'x'", data={"taskId": "x"})
    (info,) = error_details.error_object(error)["data"]
    assert info["metadata"] == {"taskId": "x"}


def test_other_data_travels_as_a_protobuf_value() -> None:
    error = UnsupportedOperation("no", data={"limits": [1, 2]})
    info, value = error_details.error_object(error)["data"]
    assert info["reason"] == "UNSUPPORTED_OPERATION"
    assert value == {
        "@type": "type.googleapis.com/google.protobuf.Value",
        "value": {"limits": [1, 2]},
    }


def test_invalid_params_lists_every_field_in_a_bad_request() -> None:
    error = InvalidParams("bad", data=[{"field": "a.b", "message": "wrong"}])
    assert error_details.error_object(error)["data"] == [
        {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{"field": "a.b", "description": "wrong"}],
        }
    ]


@pytest.mark.parametrize("error", [InternalError(), MethodNotFound("nope"), InvalidParams("x")])
def test_plain_json_rpc_errors_have_no_details(error: A2AError) -> None:
    assert error_details.error_object(error) == {"code": error.code, "message": error.message}
