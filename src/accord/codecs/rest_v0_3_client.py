"""A2A 0.3 HTTP+JSON as a client calls it: canonical requests out, ProtoJSON results in."""

from __future__ import annotations

from typing import Any

from accord.codecs.base import (
    ClientCall,
    ClientCodec,
    field_error,
    ignored,
    nothing,
    validate,
    validated,
)
from accord.codecs.error_details import error_from_object
from accord.codecs.protojson import proto_object
from accord.codecs.protojson_v0_3 import (
    MESSAGE,
    SEND_MESSAGE_RESPONSE,
    STREAM_RESPONSE,
    TASK,
    card_from_proto,
)
from accord.codecs.rest_v0_3 import BoundPushConfig, SendMessageConfiguration
from accord.codecs.versions import ProtocolVersion
from accord.types import (
    A2AModel,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    MessageSendConfiguration,
    MessageSendParams,
    TaskIdParams,
    TaskPushNotificationConfig,
    adapters,
    new_id,
)


def send_message_params(params: MessageSendParams) -> dict[str, Any]:
    """The proto SendMessageRequest of canonical send params (`blocking` always said, as
    proto3 reads a missing one as false)."""
    config = params.configuration or MessageSendConfiguration()
    configuration = SendMessageConfiguration(
        accepted_output_modes=config.accepted_output_modes,
        push_notification=config.push_notification_config,
        history_length=config.history_length or 0,
        blocking=config.blocking is not False,
    )
    out: dict[str, Any] = {
        "message": MESSAGE.to_v1(params.message.to_wire()),
        "configuration": configuration.to_wire(),
    }
    if params.metadata is not None:
        out["metadata"] = params.metadata
    return out


def push_config(result: Any) -> TaskPushNotificationConfig:
    """A proto TaskPushNotificationConfig, its task read from its `name`."""
    bound = validate(BoundPushConfig, proto_object(result, ""))
    task_id = bound.name.split("/")[1] if bound.name.startswith("tasks/") else ""
    return TaskPushNotificationConfig(
        task_id=task_id, push_notification_config=bound.push_notification_config
    )


def push_configs(result: Any) -> list[TaskPushNotificationConfig]:
    configs = proto_object(result, "").get("configs", [])
    if not isinstance(configs, list):
        raise field_error("configs", "must be a list")
    return [push_config(config) for config in configs]


def create_push_config(config: TaskPushNotificationConfig) -> dict[str, Any]:
    """The fields of a create request whose body every 0.3 server in the field reads.

    The 0.3 proto's HTTP rule says the body is the TaskPushNotificationConfig (`name`,
    `pushNotificationConfig`), the 0.3 text `{"config": ...}`, and some servers parse it as the
    whole CreateTaskPushNotificationConfigRequest (`parent`, `configId`, `config`). The body
    holds all of them, each reader ignoring the others' members. The name needs the config's
    id: one is chosen here when the config has none.
    """
    push = config.push_notification_config
    if not push.id:
        push = push.model_copy(update={"id": new_id()})
    parent = f"tasks/{config.task_id}"
    bound = {
        "name": f"{parent}/pushNotificationConfigs/{push.id}",
        "pushNotificationConfig": push.to_wire(),
    }
    return {"id": config.task_id, **bound, "parent": parent, "configId": push.id, "config": bound}


def _config_name(
    params: GetTaskPushNotificationConfigParams | DeleteTaskPushNotificationConfigParams,
) -> dict[str, Any]:
    return {"id": params.id, "configId": params.push_notification_config_id}


def _task_id(params: TaskIdParams) -> dict[str, Any]:
    return {"id": params.id}


CLIENT: ClientCodec[None] = ClientCodec(
    version=ProtocolVersion.V0_3,
    send=ClientCall(
        "SendMessage",
        send_message_params,
        validated(adapters.SEND_RESULT, SEND_MESSAGE_RESPONSE.from_v1),
    ),
    stream=ClientCall(
        "SendStreamingMessage",
        send_message_params,
        validated(adapters.STREAM_EVENT, STREAM_RESPONSE.from_v1),
    ),
    get_task=ClientCall("GetTask", A2AModel.to_wire, validated(adapters.TASK, TASK.from_v1)),
    cancel_task=ClientCall("CancelTask", _task_id, validated(adapters.TASK, TASK.from_v1)),
    resubscribe=ClientCall(
        "TaskSubscription", _task_id, validated(adapters.STREAM_EVENT, STREAM_RESPONSE.from_v1)
    ),
    set_push_config=ClientCall("CreateTaskPushNotificationConfig", create_push_config, push_config),
    get_push_config=ClientCall("GetTaskPushNotificationConfig", _config_name, push_config),
    list_push_configs=ClientCall("ListTaskPushNotificationConfig", _task_id, push_configs),
    delete_push_config=ClientCall("DeleteTaskPushNotificationConfig", _config_name, ignored),
    get_extended_card=ClientCall("GetAgentCard", nothing, card_from_proto),
    error=error_from_object,
)
"""A2A 0.3 HTTP+JSON as a client calls it (route names of REST_V0_3)."""
