"""A2A 1.0 as a client calls it: canonical requests out, ProtoJSON results and errors in."""

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
from accord.codecs.card_v1_0 import card_from_v1
from accord.codecs.error_details import error_from_object
from accord.codecs.protojson import (
    MESSAGE,
    SEND_MESSAGE_RESPONSE,
    STREAM_RESPONSE,
    TASK,
    TASK_STATE,
    proto_object,
)
from accord.codecs.v1_0 import (
    ListTasksRequest,
    ProtoTaskPushNotificationConfig,
    SendMessageConfiguration,
)
from accord.codecs.versions import ProtocolVersion
from accord.core.query import (
    ListTasksParams,
    TaskPage,
)
from accord.types import (
    A2AModel,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    MessageSendParams,
    TaskPushNotificationConfig,
    adapters,
)


def send_message_params(params: MessageSendParams) -> dict[str, Any]:
    """The SendMessageRequest of canonical send params."""
    out: dict[str, Any] = {"message": MESSAGE.to_v1(params.message.to_wire())}
    config = params.configuration
    if config is not None:
        push = config.push_notification_config
        configuration = SendMessageConfiguration(
            accepted_output_modes=config.accepted_output_modes,
            task_push_notification_config=(
                ProtoTaskPushNotificationConfig.of_push(push, None) if push else None
            ),
            history_length=config.history_length,
            return_immediately=config.blocking is False,
        )
        out["configuration"] = configuration.to_wire()
    if params.metadata is not None:
        out["metadata"] = params.metadata
    return out


def list_tasks_params(params: ListTasksParams) -> dict[str, Any]:
    """The ListTasksRequest of canonical list params."""
    query = params.query
    request = ListTasksRequest(
        context_id=query.context_id,
        status=TASK_STATE.to_v1(query.state.value) if query.state else None,
        page_size=query.page_size,
        page_token=query.page_token,
        history_length=params.history_length,
        status_timestamp_after=query.updated_after.isoformat() if query.updated_after else None,
        include_artifacts=params.include_artifacts,
    )
    return request.to_wire()


def task_page(result: Any) -> TaskPage:
    """A ListTasksResponse as a TaskPage."""
    page = proto_object(result, "")
    tasks = page.get("tasks", [])
    if not isinstance(tasks, list):
        raise field_error("tasks", "must be a list")
    return TaskPage(
        tasks=[
            adapters.TASK.validate_python(TASK.from_v1(task, f"tasks.{i}"))
            for i, task in enumerate(tasks)
        ],
        next_page_token=str(page.get("nextPageToken", "")),
        page_size=int(page.get("pageSize", len(tasks))),
        total_size=int(page.get("totalSize", 0)),
    )


def push_config(result: Any) -> TaskPushNotificationConfig:
    """A 1.0 TaskPushNotificationConfig as the canonical one."""
    config = validate(ProtoTaskPushNotificationConfig, proto_object(result, ""))
    return TaskPushNotificationConfig(
        task_id=config.task_id or "", push_notification_config=config.canonical()
    )


def push_configs(result: Any) -> list[TaskPushNotificationConfig]:
    configs = proto_object(result, "").get("configs", [])
    if not isinstance(configs, list):
        raise field_error("configs", "must be a list")
    return [push_config(config) for config in configs]


def _push_config_name(
    params: GetTaskPushNotificationConfigParams | DeleteTaskPushNotificationConfigParams,
) -> dict[str, Any]:
    return {"taskId": params.id, "id": params.push_notification_config_id}


CLIENT: ClientCodec[ListTasksParams] = ClientCodec(
    version=ProtocolVersion.V1_0,
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
    cancel_task=ClientCall("CancelTask", A2AModel.to_wire, validated(adapters.TASK, TASK.from_v1)),
    resubscribe=ClientCall(
        "SubscribeToTask",
        A2AModel.to_wire,
        validated(adapters.STREAM_EVENT, STREAM_RESPONSE.from_v1),
    ),
    set_push_config=ClientCall(
        "CreateTaskPushNotificationConfig",
        lambda config: ProtoTaskPushNotificationConfig.of(config).to_wire(),
        push_config,
    ),
    get_push_config=ClientCall("GetTaskPushNotificationConfig", _push_config_name, push_config),
    list_push_configs=ClientCall(
        "ListTaskPushNotificationConfigs", lambda params: {"taskId": params.id}, push_configs
    ),
    delete_push_config=ClientCall("DeleteTaskPushNotificationConfig", _push_config_name, ignored),
    get_extended_card=ClientCall("GetExtendedAgentCard", nothing, card_from_v1),
    error=error_from_object,
    list_tasks=ClientCall("ListTasks", list_tasks_params, task_page),
)
"""A2A 1.0 JSON-RPC as a client calls it (and HTTP+JSON 1.0, whose fields are the same)."""
