"""The A2A 0.3 JSON-RPC codec without a server: each method's params, results and the errors."""

from __future__ import annotations

from typing import Any

import pytest

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
    DeleteTaskPushNotificationConfigParams,
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
)
from codec_checks import HOOK, PUSH_CONFIG, QUESTION, TASK, Methods, invalid, parsed

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
            "message.parts.0.text.text",
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
