"""The HTTP+JSON codecs without a server: the 0.3 routes' request fields and results, both
versions' route tables, errors as google.rpc.Status, and the requests a client builds."""

from __future__ import annotations

from typing import Any

import pytest

from accord.codecs import V10Codec
from accord.codecs.rest import error_from_status, http_status, rest_request, status_body
from accord.codecs.rest_v0_3 import REST_V0_3
from accord.codecs.rest_v0_3_client import CLIENT
from accord.codecs.rest_v1_0 import REST_V1_0
from accord.core.records import EventRecord
from accord.errors import (
    A2AError,
    AuthenticatedExtendedCardNotConfigured,
    ContentTypeNotSupported,
    ExtensionSupportRequired,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    PushNotificationNotSupported,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
    VersionNotSupported,
)
from accord.types import (
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationConfig,
    Role,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from codec_checks import HOOK, PUSH_CONFIG, TASK, TIME, Methods, invalid, parsed

Json = dict[str, Any]

PROTO_QUESTION: Json = {
    "messageId": "m-1",
    "role": "ROLE_USER",
    "contextId": "c",
    "taskId": "t",
    "content": [{"text": "hi"}],
}
PROTO_TASK: Json = {
    "id": "t",
    "contextId": "c",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": TIME},
    "artifacts": [{"artifactId": "a", "name": "out", "parts": [{"text": "done"}]}],
    "history": [PROTO_QUESTION],
    "metadata": {"k": "v"},
}
BOUND: Json = {
    "name": "tasks/t/pushNotificationConfigs/h",
    "pushNotificationConfig": {"id": "h", "url": HOOK, "token": "tok"},
}


ROUTES = Methods({route.name: route.method for route in REST_V0_3.routes})
decode, encode = ROUTES.decode, ROUTES.encode


# --- 0.3 request fields ----------------------------------------------------------------------


@pytest.mark.parametrize("route", ["SendMessage", "SendStreamingMessage"])
def test_send_message_request_becomes_the_canonical_send(route: str) -> None:
    fields = {
        "message": PROTO_QUESTION,
        "configuration": {"blocking": True, "historyLength": 2, "acceptedOutputModes": ["a/b"]},
        "metadata": {"k": "v"},
    }
    params = decode(route, fields)
    assert params == MessageSendParams(
        message=Message(
            message_id="m-1",
            role=Role.USER,
            context_id="c",
            task_id="t",
            parts=[TextPart(text="hi")],
        ),
        configuration=MessageSendConfiguration(
            blocking=True, history_length=2, accepted_output_modes=["a/b"]
        ),
        metadata={"k": "v"},
    )


def test_send_message_reads_as_proto3_does() -> None:
    params = decode("SendMessage", {"request": {"messageId": "m", "role": "ROLE_USER"}})
    assert params.message.parts == []
    assert params.configuration == MessageSendConfiguration(blocking=False)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"configuration": {"blocking": True}}, "message"),
        ({"message": {**PROTO_QUESTION, "role": "user"}}, "message.role"),
        ({"message": {**PROTO_QUESTION, "content": [{}]}}, "message.content.0"),
        ({"message": {**PROTO_QUESTION, "messageId": None}}, "message.messageId"),
        (
            {"message": PROTO_QUESTION, "configuration": {"blocking": "maybe"}},
            "configuration.blocking",
        ),
        (
            {"message": PROTO_QUESTION, "configuration": {"historyLength": -1}},
            "configuration.historyLength",
        ),
    ],
)
def test_bad_send_message_requests_name_the_field(fields: Json, field: str) -> None:
    with invalid(field):
        decode("SendMessage", fields)


@pytest.mark.parametrize(
    ("route", "fields", "expected"),
    [
        ("GetTask", {"id": "t"}, TaskQueryParams(id="t")),
        ("GetTask", {"id": "t", "historyLength": "1"}, TaskQueryParams(id="t", history_length=1)),
        ("GetTask", {"id": "t", "historyLength": "0"}, TaskQueryParams(id="t")),
        ("CancelTask", {"id": "t", "name": "tasks/t"}, TaskIdParams(id="t")),
        ("TaskSubscription", {"id": "t"}, TaskIdParams(id="t")),
        ("CreateTaskPushNotificationConfig", {"id": "t", **BOUND}, PUSH_CONFIG),
        (
            "CreateTaskPushNotificationConfig",
            {
                "id": "t",
                "configId": "h",
                "config": {"pushNotificationConfig": {"url": HOOK, "token": "tok"}},
            },
            PUSH_CONFIG,
        ),
        (
            "GetTaskPushNotificationConfig",
            {"id": "t", "configId": "h"},
            GetTaskPushNotificationConfigParams(id="t", push_notification_config_id="h"),
        ),
        (
            "ListTaskPushNotificationConfig",
            {"id": "t", "pageSize": "5"},
            ListTaskPushNotificationConfigParams(id="t"),
        ),
        (
            "DeleteTaskPushNotificationConfig",
            {"id": "t", "configId": "h"},
            DeleteTaskPushNotificationConfigParams(id="t", push_notification_config_id="h"),
        ),
    ],
)
def test_route_fields_become_the_canonical_params(route: str, fields: Json, expected: Any) -> None:
    assert decode(route, fields) == expected


def test_a_push_config_created_under_a_config_id_keeps_its_own_id() -> None:
    fields = {"id": "t", "configId": "other", "config": BOUND}
    assert decode("CreateTaskPushNotificationConfig", fields) == PUSH_CONFIG


@pytest.mark.parametrize(
    ("route", "fields", "field"),
    [
        ("GetTask", {"id": "t", "historyLength": "x"}, "historyLength"),
        ("GetTask", {"id": "t", "historyLength": "-1"}, "historyLength"),
        ("CreateTaskPushNotificationConfig", {"id": "t", "url": HOOK}, "pushNotificationConfig"),
        (
            "CreateTaskPushNotificationConfig",
            {"id": "t", "config": {"pushNotificationConfig": {}}},
            "config.pushNotificationConfig.url",
        ),
        ("GetTaskPushNotificationConfig", {"id": "t"}, "configId"),
        ("DeleteTaskPushNotificationConfig", {"configId": "h"}, "id"),
    ],
)
def test_bad_route_fields_name_the_field(route: str, fields: Json, field: str) -> None:
    with invalid(field):
        decode(route, fields)


# --- 0.3 results -----------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["GetTask", "CancelTask"])
def test_a_task_is_0_3_proto_json(route: str) -> None:
    assert encode(route, TASK) == PROTO_TASK


def test_send_message_wraps_the_task_or_the_message() -> None:
    assert encode("SendMessage", TASK) == {"task": PROTO_TASK}
    reply = Message(message_id="r", role=Role.AGENT, parts=[TextPart(text="yo")])
    assert encode("SendMessage", reply) == {
        "message": {"messageId": "r", "role": "ROLE_AGENT", "content": [{"text": "yo"}]}
    }


def test_a_canceled_task_is_spelled_as_the_0_3_proto_does() -> None:
    canceled = TASK.model_copy(update={"status": TaskStatus(state=TaskState.CANCELED)})
    assert encode("GetTask", canceled)["status"] == {"state": "TASK_STATE_CANCELLED"}


@pytest.mark.parametrize("route", ["SendStreamingMessage", "TaskSubscription"])
def test_a_stream_event_is_wrapped_in_its_member(route: str) -> None:
    event = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING), final=False
    )
    record = EventRecord.of("t", 2, event, final=False)
    assert REST_V0_3.route(route).method.streaming
    assert encode(route, record) == {
        "statusUpdate": {
            "taskId": "t",
            "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING"},
            "final": False,
        }
    }


def test_push_config_results_are_named_by_their_task() -> None:
    assert encode("CreateTaskPushNotificationConfig", PUSH_CONFIG) == BOUND
    assert encode("GetTaskPushNotificationConfig", PUSH_CONFIG) == BOUND
    assert encode("ListTaskPushNotificationConfig", [PUSH_CONFIG]) == {"configs": [BOUND]}
    assert encode("DeleteTaskPushNotificationConfig", None) == {}


# --- route tables ----------------------------------------------------------------------------


def test_the_0_3_routes_are_the_0_3_proto_s_under_v1() -> None:
    assert (REST_V0_3.prefix, REST_V0_3.tenants, REST_V0_3.media_type) == (
        "/v1",
        False,
        "application/json",
    )
    assert {(route.verbs, route.path) for route in REST_V0_3.routes} == {
        (("POST",), "/message:send"),
        (("POST",), "/message:stream"),
        (("GET",), "/tasks/{id}"),
        (("POST",), "/tasks/{id}:cancel"),
        (("GET", "POST"), "/tasks/{id}:subscribe"),
        (("POST",), "/tasks/{id}/pushNotificationConfigs"),
        (("GET",), "/tasks/{id}/pushNotificationConfigs"),
        (("GET",), "/tasks/{id}/pushNotificationConfigs/{configId:str}"),
        (("DELETE",), "/tasks/{id}/pushNotificationConfigs/{configId:str}"),
        (("GET",), "/card"),
    }


def test_the_1_0_routes_run_the_1_0_json_rpc_methods() -> None:
    assert (REST_V1_0.prefix, REST_V1_0.tenants, REST_V1_0.media_type) == (
        "",
        True,
        "application/a2a+json",
    )
    assert {route.name for route in REST_V1_0.routes} == set(V10Codec.methods)
    for route in REST_V1_0.routes:
        assert route.method is V10Codec.methods[route.name]


# --- errors as google.rpc.Status -------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "status", "name"),
    [
        (ParseError(), 400, "INVALID_ARGUMENT"),
        (InvalidRequest(), 400, "INVALID_ARGUMENT"),
        (MethodNotFound(), 404, "NOT_FOUND"),
        (InvalidParams(), 400, "INVALID_ARGUMENT"),
        (InternalError(), 500, "INTERNAL"),
        (TaskNotFound(), 404, "NOT_FOUND"),
        (TaskNotCancelable(), 400, "FAILED_PRECONDITION"),
        (PushNotificationNotSupported(), 400, "FAILED_PRECONDITION"),
        (UnsupportedOperation(), 400, "FAILED_PRECONDITION"),
        (ContentTypeNotSupported(), 400, "INVALID_ARGUMENT"),
        (InvalidAgentResponse(), 500, "INTERNAL"),
        (AuthenticatedExtendedCardNotConfigured(), 400, "FAILED_PRECONDITION"),
        (ExtensionSupportRequired(), 400, "FAILED_PRECONDITION"),
        (VersionNotSupported(), 400, "FAILED_PRECONDITION"),
    ],
)
def test_each_error_has_its_http_status(error: A2AError, status: int, name: str) -> None:
    assert http_status(error) == (status, name)


def test_an_a2a_error_body_carries_its_error_info_and_reads_back() -> None:
    error = TaskNotFound("no task t", data={"taskId": "t"})
    body = parsed(status_body(error, *http_status(error)))
    assert body == {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "no task t",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "TASK_NOT_FOUND",
                    "domain": "a2a-protocol.org",
                    "metadata": {"taskId": "t"},
                }
            ],
        }
    }
    found = error_from_status(body)
    assert isinstance(found, TaskNotFound)
    assert (found.message, found.data) == ("no task t", {"taskId": "t"})


def test_invalid_params_list_their_fields_in_a_bad_request() -> None:
    error = InvalidParams("id: required", data=[{"field": "id", "message": "required"}])
    body = parsed(status_body(error, *http_status(error)))
    assert body["error"]["details"] == [
        {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{"field": "id", "description": "required"}],
        }
    ]
    found = error_from_status(body)
    assert isinstance(found, InvalidParams)
    assert found.data == [{"field": "id", "message": "required"}]


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        ("INVALID_ARGUMENT", InvalidParams),
        ("NOT_FOUND", MethodNotFound),
        ("DATA_LOSS", InternalError),
    ],
)
def test_a_status_without_error_info_is_read_by_its_name(status: str, kind: type[A2AError]) -> None:
    found = error_from_status({"error": {"code": 400, "status": status, "message": "no"}})
    assert type(found) is kind


@pytest.mark.parametrize("body", [None, [], {"error": "x"}, {"error": {"code": 400}}])
def test_a_body_that_is_no_status_reads_as_none(body: Any) -> None:
    assert error_from_status(body) is None


# --- the client's direction ------------------------------------------------------------------


def test_a_client_request_puts_path_fields_in_the_path() -> None:
    route = REST_V0_3.route("GetTaskPushNotificationConfig")
    request = rest_request(route, {"id": "t/1", "configId": "c:1"})
    assert (request.verb, request.path, request.query, request.body) == (
        "GET",
        "/tasks/t%2F1/pushNotificationConfigs/c%3A1",
        {},
        None,
    )


def test_a_client_request_puts_other_fields_in_the_query_or_the_body() -> None:
    get = rest_request(REST_V1_0.route("ListTasks"), {"pageSize": 2, "includeArtifacts": True})
    assert (get.verb, get.path, get.query) == (
        "GET",
        "/tasks",
        {"pageSize": "2", "includeArtifacts": "true"},
    )
    subscribe = rest_request(REST_V1_0.route("SubscribeToTask"), {"id": "t"})
    assert (subscribe.verb, subscribe.path, subscribe.body) == ("POST", "/tasks/t:subscribe", {})
    send = rest_request(REST_V0_3.route("SendMessage"), {"message": PROTO_QUESTION})
    assert (send.verb, send.body) == ("POST", {"message": PROTO_QUESTION})


def test_the_0_3_client_always_says_blocking() -> None:
    message = Message.user("hi")
    fields = CLIENT.send.encode(MessageSendParams(message=message))
    assert fields is not None and fields["configuration"]["blocking"] is True
    assert fields["message"]["content"] == [{"text": "hi"}]
    non_blocking = MessageSendParams(
        message=message, configuration=MessageSendConfiguration(blocking=False)
    )
    assert CLIENT.send.encode(non_blocking)["configuration"]["blocking"] is False  # type: ignore[index]


def test_the_0_3_client_reads_proto_results() -> None:
    assert CLIENT.send.decode({"task": PROTO_TASK}) == TASK
    assert CLIENT.get_task.decode(PROTO_TASK) == TASK
    assert CLIENT.get_push_config.decode(BOUND) == PUSH_CONFIG
    assert CLIENT.list_push_configs.decode({"configs": [BOUND]}) == [PUSH_CONFIG]


def test_the_0_3_client_creates_a_push_config_with_a_body_every_server_reads() -> None:
    """The TaskPushNotificationConfig with its name (the proto's `body: "config"`), and the
    CreateTaskPushNotificationConfigRequest some servers parse the body as instead."""
    config = TaskPushNotificationConfig(
        task_id="t", push_notification_config=PushNotificationConfig(url=HOOK, id="c-1")
    )
    bound = {
        "name": "tasks/t/pushNotificationConfigs/c-1",
        "pushNotificationConfig": {"url": HOOK, "id": "c-1"},
    }
    fields = CLIENT.set_push_config.encode(config)
    assert fields == {"id": "t", **bound, "parent": "tasks/t", "configId": "c-1", "config": bound}
    request = rest_request(REST_V0_3.route("CreateTaskPushNotificationConfig"), fields)
    assert (request.verb, request.path) == ("POST", "/tasks/t/pushNotificationConfigs")
    assert request.body is not None and "id" not in request.body


def test_the_0_3_client_names_a_push_config_without_an_id() -> None:
    config = TaskPushNotificationConfig(
        task_id="t", push_notification_config=PushNotificationConfig(url=HOOK)
    )
    fields = CLIENT.set_push_config.encode(config)
    config_id = fields["configId"]
    assert config_id and fields["pushNotificationConfig"]["id"] == config_id
    assert (
        fields["name"] == fields["config"]["name"] == f"tasks/t/pushNotificationConfigs/{config_id}"
    )
    assert CLIENT.set_push_config.encode(config)["configId"] != config_id, "a new one each time"
