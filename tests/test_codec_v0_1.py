"""The A2A 0.1 JSON-RPC codec without a server: `tasks/send` and its kin, results, errors."""

from __future__ import annotations

from typing import Any

import pytest

from accord.codecs import JSONRPC_CODECS, ProtocolVersion
from accord.codecs.v0_1_client import CLIENT
from accord.errors import (
    A2AClientError,
    ExtensionSupportRequired,
    InvalidParams,
    InvalidRequest,
    TaskNotFound,
)
from accord.types import (
    Artifact,
    DataPart,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from codec_checks import HOOK, PUSH_CONFIG, TASK, TIME, Methods, invalid, parsed

CODEC = JSONRPC_CODECS[ProtocolVersion.V0_1]
Json = dict[str, Any]

SEND: Json = {
    "id": "t",
    "sessionId": "s",
    "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]},
    "acceptedOutputModes": ["text/plain"],
    "historyLength": 2,
    "pushNotification": {"url": HOOK, "token": "tok"},
    "metadata": {"k": "v"},
}


METHODS = Methods(CODEC.methods)
decode, encode = METHODS.decode, METHODS.encode


# --- params ----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["tasks/send", "tasks/sendSubscribe"])
def test_send_goes_to_the_task_the_client_named(method: str) -> None:
    params = decode(method, SEND)
    message = params.message
    assert (message.task_id, message.context_id, message.role) == ("t", "s", Role.USER)
    assert message.parts == [TextPart(text="hi")]
    assert message.message_id, "0.1 messages have no id: one is made"
    assert params.configuration == MessageSendConfiguration(
        accepted_output_modes=["text/plain"],
        history_length=2,
        push_notification_config=PushNotificationConfig(id="t", url=HOOK, token="tok"),
    )
    assert params.metadata == {"k": "v"}


def test_a_send_without_a_session_starts_a_new_context() -> None:
    params = decode("tasks/send", {"id": "t", "message": SEND["message"]})
    assert params.message.context_id is None
    assert params.configuration.push_notification_config is None


def test_parts_are_tagged_by_type() -> None:
    parts = [
        {"type": "text", "text": "a"},
        {"type": "data", "data": {"n": 1}},
        {"type": "file", "file": {"uri": "https://example.com/f", "mimeType": "text/plain"}},
    ]
    message = decode("tasks/send", {"id": "t", "message": {"role": "user", "parts": parts}})
    assert [part.kind for part in message.message.parts] == ["text", "data", "file"]
    assert message.message.parts[1] == DataPart(data={"n": 1})


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"message": SEND["message"]}, "id"),
        ({"id": "", "message": SEND["message"]}, "id"),
        ({"id": "t"}, "message"),
        ({"id": "t", "message": "hi"}, "message"),
        ({"id": "t", "message": {"role": "user"}}, "message.parts"),
        (
            {"id": "t", "message": {"role": "user", "parts": [{"text": "a"}]}},
            "message.parts.0.type",
        ),
        (
            {"id": "t", "message": {"role": "user", "parts": [{"type": "image"}]}},
            "message.parts.0.type",
        ),
        ({"id": "t", "message": {"role": "user", "parts": ["a"]}}, "message.parts.0"),
        ({"id": "t", "message": {"role": "robot", "parts": []}}, "message.role"),
        ({**SEND, "historyLength": -1}, "historyLength"),
        ({**SEND, "pushNotification": {"token": "t"}}, "pushNotification.url"),
    ],
)
def test_bad_send_params_name_the_field(params: Json, field: str) -> None:
    with invalid(field):
        decode("tasks/send", params)


@pytest.mark.parametrize(
    ("method", "params", "expected"),
    [
        ("tasks/get", {"id": "t", "historyLength": 3}, TaskQueryParams(id="t", history_length=3)),
        ("tasks/resubscribe", {"id": "t"}, TaskQueryParams(id="t")),
        ("tasks/cancel", {"id": "t"}, TaskIdParams(id="t")),
        (
            "tasks/pushNotification/set",
            {"id": "t", "pushNotificationConfig": {"url": HOOK, "token": "tok"}},
            TaskPushNotificationConfig(
                task_id="t",
                push_notification_config=PushNotificationConfig(id="t", url=HOOK, token="tok"),
            ),
        ),
        (
            "tasks/pushNotification/get",
            {"id": "t"},
            GetTaskPushNotificationConfigParams(id="t", push_notification_config_id="t"),
        ),
    ],
)
def test_task_params_are_the_canonical_params(method: str, params: Json, expected: Any) -> None:
    assert decode(method, params) == expected


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("tasks/get", {}, "id"),
        ("tasks/get", {"id": "t", "historyLength": "x"}, "historyLength"),
        ("tasks/cancel", {"taskId": "t"}, "id"),
        ("tasks/pushNotification/set", {"id": "t"}, "pushNotificationConfig"),
        ("tasks/pushNotification/set", {"pushNotificationConfig": {"url": HOOK}}, "id"),
        ("tasks/pushNotification/get", {"id": 1}, "id"),
    ],
)
def test_bad_task_params_name_the_field(method: str, params: Json, field: str) -> None:
    with invalid(field):
        decode(method, params)


@pytest.mark.parametrize("method", sorted(CODEC.methods))
def test_params_must_be_an_object(method: str) -> None:
    with pytest.raises(InvalidParams, match="params must be an object"):
        decode(method, ["t"])


# --- results ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["tasks/send", "tasks/get", "tasks/cancel"])
def test_a_task_result_in_0_1_shape(method: str) -> None:
    assert encode(method, TASK) == {
        "id": "t",
        "sessionId": "c",
        "status": {"state": "completed", "timestamp": TIME},
        "artifacts": [{"name": "out", "parts": [{"type": "text", "text": "done"}], "index": 0}],
        "history": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
        "metadata": {"k": "v"},
    }


@pytest.mark.parametrize(
    ("state", "said"),
    [
        (TaskState.REJECTED, "failed"),
        (TaskState.AUTH_REQUIRED, "input-required"),
        (TaskState.CANCELED, "canceled"),
        (TaskState.INPUT_REQUIRED, "input-required"),
    ],
)
def test_states_0_1_lacks_are_the_nearest_it_has(state: TaskState, said: str) -> None:
    task = TASK.model_copy(update={"status": TaskStatus(state=state)})
    assert encode("tasks/get", task)["status"] == {"state": said}


def test_a_status_message_is_in_0_1_shape() -> None:
    question = Message.agent("name?")
    status = TaskStatus(state=TaskState.INPUT_REQUIRED, message=question)
    wire = encode("tasks/get", TASK.model_copy(update={"status": status}))
    assert wire["status"]["message"] == {
        "role": "agent",
        "parts": [{"type": "text", "text": "name?"}],
    }


def test_a_push_config_result_is_the_tasks_webhook_without_an_id() -> None:
    wire = {"id": "t", "pushNotificationConfig": {"url": HOOK, "token": "tok"}}
    assert encode("tasks/pushNotification/set", PUSH_CONFIG) == wire
    assert encode("tasks/pushNotification/get", PUSH_CONFIG) == wire


def test_errors_are_0_x_error_objects() -> None:
    assert parsed(CODEC.error(TaskNotFound("no task t"))) == {
        "code": -32001,
        "message": "no task t",
    }
    assert parsed(CODEC.error(ExtensionSupportRequired("needs ext")))["code"] == (
        InvalidRequest.code
    )


# --- the client's tables ---------------------------------------------------------------------


def test_the_client_sends_the_message_to_a_task_it_names() -> None:
    message = Message.user("hi", context_id="s")
    fields = CLIENT.send.encode(MessageSendParams(message=message))
    assert fields is not None
    assert fields["id"], "a new task's id is chosen by the client"
    assert fields["sessionId"] == "s"
    assert fields["message"] == {"role": "user", "parts": [{"type": "text", "text": "hi"}]}


def test_the_client_has_no_non_blocking_send() -> None:
    params = MessageSendParams(
        message=Message.user("hi"), configuration=MessageSendConfiguration(blocking=False)
    )
    with pytest.raises(A2AClientError, match="no non-blocking send"):
        CLIENT.send.encode(params)


def test_the_client_reads_a_0_1_task() -> None:
    task = CLIENT.get_task.decode(
        {
            "id": "t",
            "sessionId": "s",
            "status": {"state": "completed"},
            "artifacts": [{"parts": [{"type": "text", "text": "x"}], "index": 4}],
            "history": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
        }
    )
    assert isinstance(task, Task)
    assert (task.context_id, task.status.state) == ("s", TaskState.COMPLETED)
    assert task.artifacts == [Artifact(artifact_id="4", parts=[TextPart(text="x")])]
    assert task.history is not None and task.history[0].text == "hi"


def test_the_client_reads_0_1_events() -> None:
    status = CLIENT.stream.decode({"id": "t", "status": {"state": "working"}, "final": False})
    assert isinstance(status, TaskStatusUpdateEvent)
    assert (status.task_id, status.status.state, status.final) == ("t", TaskState.WORKING, False)
    chunk = CLIENT.stream.decode(
        {"id": "t", "artifact": {"parts": [{"type": "text", "text": "x"}], "index": 1}}
    )
    assert isinstance(chunk, TaskArtifactUpdateEvent)
    assert chunk.artifact.artifact_id == "1"


def test_the_client_refuses_what_0_1_lacks_before_sending() -> None:
    with pytest.raises(A2AClientError, match=r"not part of A2A 0\.1"):
        CLIENT.list_push_configs.encode(ListTaskPushNotificationConfigParams(id="t"))
    with pytest.raises(A2AClientError, match=r"not part of A2A 0\.1"):
        CLIENT.delete_push_config.encode(
            DeleteTaskPushNotificationConfigParams(id="t", push_notification_config_id="t")
        )
    with pytest.raises(A2AClientError, match=r"not part of A2A 0\.1"):
        CLIENT.get_extended_card.encode(None)
    other = GetTaskPushNotificationConfigParams(id="t", push_notification_config_id="other")
    with pytest.raises(A2AClientError, match="one webhook per task"):
        CLIENT.get_push_config.encode(other)
