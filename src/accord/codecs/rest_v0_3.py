"""The A2A 0.3 HTTP+JSON routes under `/v1`: requests and results in 0.3's ProtoJSON.

Its data objects are those of `protojson_v0_3`; a push config bound to a task is named
`tasks/{id}/pushNotificationConfigs/{configId}`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import AliasChoices, Field
from pydantic_core import to_json

from accord.codecs.base import Method, validate
from accord.codecs.error_names import typed_members
from accord.codecs.protojson import Converter, proto_object
from accord.codecs.protojson_v0_3 import (
    MESSAGE,
    SEND_MESSAGE_RESPONSE,
    STREAM_RESPONSE,
    TASK,
    proto_card,
)
from accord.codecs.rest import RestCodec, RestRoute
from accord.codecs.v0_3 import agent_card
from accord.codecs.v1_0 import (
    converted_record,
    empty_result,
    get_extended_card_request,
    task_id_request,
)
from accord.codecs.versions import ProtocolVersion
from accord.core.records import EventRecord
from accord.types import (
    A2AModel,
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationConfig,
    TaskPushNotificationConfig,
    TaskQueryParams,
)

# --- requests --------------------------------------------------------------------------------


class SendMessageConfiguration(A2AModel):
    """0.3 proto SendMessageConfiguration: as proto3 reads it, a missing `blocking` is false
    and a `historyLength` of 0 means the whole history."""

    accepted_output_modes: list[str] | None = None
    push_notification: PushNotificationConfig | None = None
    history_length: int = Field(default=0, ge=0)
    blocking: bool = False

    def canonical(self) -> MessageSendConfiguration:
        return MessageSendConfiguration(
            accepted_output_modes=self.accepted_output_modes or None,
            blocking=self.blocking,
            history_length=self.history_length or None,
            push_notification_config=self.push_notification,
        )


class SendMessageRequest(A2AModel):
    """0.3 proto SendMessageRequest (the message is converted on its own, see MESSAGE).

    The proto field is `request` with json_name `message`; ProtoJSON accepts either name (the
    official SDK's 0.3 client sends `request`)."""

    message: dict[str, Any] = Field(validation_alias=AliasChoices("message", "request"))
    configuration: SendMessageConfiguration = Field(default_factory=SendMessageConfiguration)
    metadata: dict[str, Any] | None = None


class GetTaskRequest(A2AModel):
    """0.3 proto GetTaskRequest, its task named by the path (0 history: all of it)."""

    id: str
    history_length: int = Field(default=0, ge=0)


class BoundPushConfig(A2AModel):
    """0.3 proto TaskPushNotificationConfig: a config and its `tasks/.../{id}` name."""

    name: str = ""
    push_notification_config: PushNotificationConfig


class CreatePushConfigRequest(A2AModel):
    """0.3 proto CreateTaskPushNotificationConfigRequest, its task named by the path."""

    config_id: str = ""
    config: BoundPushConfig


class TaskPath(A2AModel):
    """The task a route's path names."""

    id: str


class ConfigPath(TaskPath):
    """A task and one of its push configs, both named by the path."""

    config_id: str


def send_message_request(params: Any) -> MessageSendParams:
    request = validate(SendMessageRequest, proto_object(params, ""))
    message = {"parts": [], **MESSAGE.from_v1(request.message, "message")}  # proto3: none is []
    return MessageSendParams(
        message=validate(Message, message, "message"),
        configuration=request.configuration.canonical(),
        metadata=request.metadata,
    )


def get_task_request(params: Any) -> TaskQueryParams:
    request = validate(GetTaskRequest, proto_object(params, ""))
    return TaskQueryParams(id=request.id, history_length=request.history_length or None)


def create_push_config_request(params: Any) -> TaskPushNotificationConfig:
    """The body is a TaskPushNotificationConfig, or a CreateTaskPushNotificationConfigRequest
    holding one as `config` (its `configId` names a config that has no id)."""
    fields = proto_object(params, "")
    config_id = ""
    if "config" in fields:
        request = validate(CreatePushConfigRequest, fields)
        bound, config_id = request.config, request.config_id
    else:
        bound = validate(BoundPushConfig, fields)
    push = bound.push_notification_config
    if not push.id and config_id:
        push = push.model_copy(update={"id": config_id})
    task_id = validate(TaskPath, fields).id
    return TaskPushNotificationConfig(task_id=task_id, push_notification_config=push)


def get_push_config_request(params: Any) -> GetTaskPushNotificationConfigParams:
    name = validate(ConfigPath, proto_object(params, ""))
    return GetTaskPushNotificationConfigParams(
        id=name.id, push_notification_config_id=name.config_id
    )


def list_push_configs_request(params: Any) -> ListTaskPushNotificationConfigParams:
    """Every config fits on one page: `pageSize` and `pageToken` change nothing."""
    task_id = validate(TaskPath, proto_object(params, "")).id
    return ListTaskPushNotificationConfigParams(id=task_id)


def delete_push_config_request(params: Any) -> DeleteTaskPushNotificationConfigParams:
    name = validate(ConfigPath, proto_object(params, ""))
    return DeleteTaskPushNotificationConfigParams(
        id=name.id, push_notification_config_id=name.config_id
    )


# --- results ---------------------------------------------------------------------------------

STREAM_ENCODING = "0.3+proto"
"""The key of a record's 0.3 proto StreamResponse JSON in `EventRecord.encodings`."""


def _encoder(converter: Converter) -> Callable[[A2AModel], bytes]:
    """The encoder of a result model whose ProtoJSON `converter` makes from its 0.3 JSON."""

    def encode(model: A2AModel) -> bytes:
        return to_json(converter.to_v1(model.to_wire()))

    return encode


task_result = _encoder(TASK)
send_message_result = _encoder(SEND_MESSAGE_RESPONSE)


def stream_result(record: EventRecord) -> bytes:
    return converted_record(record, STREAM_ENCODING, STREAM_RESPONSE)


def _bound(config: TaskPushNotificationConfig) -> dict[str, Any]:
    push = config.push_notification_config
    return {
        "name": f"tasks/{config.task_id}/pushNotificationConfigs/{push.id}",
        "pushNotificationConfig": push.to_wire(),
    }


def push_config_result(config: TaskPushNotificationConfig) -> bytes:
    return to_json(_bound(config))


def push_configs_result(configs: list[TaskPushNotificationConfig]) -> bytes:
    return to_json({"configs": [_bound(config) for config in configs]})


def agent_card_result(card: AgentCard) -> bytes:
    return to_json(proto_card(agent_card(card)))


# --- routes ----------------------------------------------------------------------------------


def _route(verbs: str, path: str, name: str, method: Method) -> RestRoute:
    return RestRoute(tuple(verbs.split("|")), path, name, method)


REST_V0_3 = RestCodec(
    version=ProtocolVersion.V0_3,
    prefix="/v1",
    tenants=False,
    media_type="application/json",
    error_members=typed_members,
    routes=(
        _route(
            "POST",
            "/message:send",
            "SendMessage",
            Method(lambda s: s.send_message, send_message_request, send_message_result),
        ),
        _route(
            "POST",
            "/message:stream",
            "SendStreamingMessage",
            Method(lambda s: s.stream_message, send_message_request, stream_result, True),
        ),
        _route(
            "GET",
            "/tasks/{id}",
            "GetTask",
            Method(lambda s: s.get_task, get_task_request, task_result),
        ),
        _route(
            "POST",
            "/tasks/{id}:cancel",
            "CancelTask",
            Method(lambda s: s.cancel_task, task_id_request, task_result),
        ),
        _route(
            "GET|POST",
            "/tasks/{id}:subscribe",
            "TaskSubscription",
            Method(lambda s: s.resubscribe, task_id_request, stream_result, True),
        ),
        _route(
            "POST",
            "/tasks/{id}/pushNotificationConfigs",
            "CreateTaskPushNotificationConfig",
            Method(lambda s: s.set_push_config, create_push_config_request, push_config_result),
        ),
        _route(
            "GET",
            "/tasks/{id}/pushNotificationConfigs",
            "ListTaskPushNotificationConfig",
            Method(lambda s: s.list_push_configs, list_push_configs_request, push_configs_result),
        ),
        _route(
            "GET",
            "/tasks/{id}/pushNotificationConfigs/{configId:str}",
            "GetTaskPushNotificationConfig",
            Method(lambda s: s.get_push_config, get_push_config_request, push_config_result),
        ),
        _route(
            "DELETE",
            "/tasks/{id}/pushNotificationConfigs/{configId:str}",
            "DeleteTaskPushNotificationConfig",
            Method(lambda s: s.delete_push_config, delete_push_config_request, empty_result),
        ),
        _route(
            "GET",
            "/card",
            "GetAgentCard",
            Method(lambda s: s.get_extended_card, get_extended_card_request, agent_card_result),
        ),
    ),
    hint=" (the A2A 1.0 routes are those without the /v1 prefix)",
)
"""A2A 0.3 over HTTP+JSON (spec 0.3, sections 3.2.3 and 7), under `/v1`."""
