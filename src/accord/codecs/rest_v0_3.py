"""The A2A 0.3 HTTP+JSON routes under `/v1`: the ProtoJSON of 0.3's a2a.proto, both ways.

0.3's proto JSON is not its JSON-RPC JSON: no `kind`, `ROLE_*` and `TASK_STATE_*` enums (with
`TASK_STATE_CANCELLED`), a message's parts are its `content`, a part is a oneof of `text`,
`file` (`fileWithUri` or `fileWithBytes`, and `mimeType`) and `data` (`{"data": {...}}`), a
push config bound to a task is named `tasks/{id}/pushNotificationConfigs/{configId}`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import AliasChoices, Field
from pydantic_core import to_json

from accord.codecs.base import (
    ClientCall,
    ClientCodec,
    Method,
    field_error,
    ignored,
    nothing,
    validate,
    validated,
)
from accord.codecs.card_v1_0 import (
    proto_capabilities,
    proto_card_security,
    security_requirements,
    security_scheme,
)
from accord.codecs.error_details import error_from_object
from accord.codecs.error_names import typed_members
from accord.codecs.protojson import ROLE, Converter, OneOf, ProtoEnum, Shape, proto_object
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
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    adapters,
    new_id,
)

# --- data objects ----------------------------------------------------------------------------

TASK_STATE = ProtoEnum(
    "TaskState",
    [
        ("TASK_STATE_UNSPECIFIED", TaskState.UNKNOWN),
        ("TASK_STATE_SUBMITTED", TaskState.SUBMITTED),
        ("TASK_STATE_WORKING", TaskState.WORKING),
        ("TASK_STATE_COMPLETED", TaskState.COMPLETED),
        ("TASK_STATE_FAILED", TaskState.FAILED),
        ("TASK_STATE_CANCELLED", TaskState.CANCELED),
        ("TASK_STATE_INPUT_REQUIRED", TaskState.INPUT_REQUIRED),
        ("TASK_STATE_REJECTED", TaskState.REJECTED),
        ("TASK_STATE_AUTH_REQUIRED", TaskState.AUTH_REQUIRED),
    ],
)

_FILE_CONTENT = {"fileWithUri": "uri", "fileWithBytes": "bytes"}  # proto member -> 0.3 member


class PartConverter:
    """Part of the 0.3 proto: a oneof of `text`, `file` and `data`.

    The proto has no part metadata and no file name: those are left out of what is sent.
    """

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]:
        kind = obj["kind"]
        if kind == "text":
            return {"text": obj["text"]}
        if kind == "data":
            return {"data": {"data": obj["data"]}}
        file = obj["file"]
        out = {new: file[old] for new, old in _FILE_CONTENT.items() if old in file}
        if "mimeType" in file:
            out["mimeType"] = file["mimeType"]
        return {"file": out}

    def from_v1(self, value: Any, path: str) -> dict[str, Any]:
        part = proto_object(value, path)
        present = [member for member in ("text", "file", "data") if member in part]
        if len(present) != 1:
            found = f" (found {', '.join(present)})" if present else ""
            raise field_error(path, f"a part holds exactly one of text, file or data{found}")
        member = present[0]
        where = f"{path}.{member}"
        if member == "text":
            if not isinstance(part["text"], str):
                raise field_error(where, "must be a string")
            return {"kind": "text", "text": part["text"]}
        if member == "data":
            data = proto_object(part["data"], where).get("data", {})
            if not isinstance(data, dict):
                raise field_error(f"{where}.data", "must be an object")
            return {"kind": "data", "data": data}
        return {"kind": "file", "file": _file(proto_object(part["file"], where), where)}


def _file(file: dict[str, Any], path: str) -> dict[str, Any]:
    content = [member for member in _FILE_CONTENT if member in file]
    if len(content) != 1:
        raise field_error(path, "a file holds exactly one of fileWithUri or fileWithBytes")
    out: dict[str, Any] = {}
    for member in (*content, "mimeType"):
        if member in file:
            if not isinstance(file[member], str):
                raise field_error(f"{path}.{member}", "must be a string")
            out[_FILE_CONTENT.get(member, member)] = file[member]
    return out


PART = PartConverter()
MESSAGE = Shape(
    kind="message",
    enums={"role": ROLE},
    many={"parts": PART},
    renamed={"parts": "content"},
    only_v0_3=("referenceTaskIds",),
)
ARTIFACT = Shape(many={"parts": PART})
TASK_STATUS = Shape(enums={"state": TASK_STATE}, one={"message": MESSAGE})
TASK = Shape(
    kind="task", one={"status": TASK_STATUS}, many={"artifacts": ARTIFACT, "history": MESSAGE}
)
STATUS_UPDATE = Shape(kind="status-update", one={"status": TASK_STATUS})
ARTIFACT_UPDATE = Shape(kind="artifact-update", one={"artifact": ARTIFACT})
SEND_MESSAGE_RESPONSE = OneOf({"task": TASK, "message": MESSAGE})
STREAM_RESPONSE = OneOf(
    {
        "task": TASK,
        "message": MESSAGE,
        "statusUpdate": STATUS_UPDATE,
        "artifactUpdate": ARTIFACT_UPDATE,
    }
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


def proto_card(card: dict[str, Any]) -> dict[str, Any]:
    """An agent card's 0.3 JSON as the 0.3 proto spells it.

    The proto has no `iconUrl` and no `stateTransitionHistory`, and its bools are false when
    unset (so a false one is left out); its security schemes and requirements have the shapes
    1.0 kept (see codecs.v1_0.security_scheme: schemes are oneofs, OAuth flows too, the first
    flow of the card being kept).
    """
    out = {
        k: v
        for k, v in card.items()
        if k != "iconUrl" and not (k == "supportsAuthenticatedExtendedCard" and v is False)
    }
    out["capabilities"] = proto_capabilities(card["capabilities"], "streaming", "pushNotifications")
    if "securitySchemes" in card:
        out["securitySchemes"] = {
            name: security_scheme(scheme) for name, scheme in card["securitySchemes"].items()
        }
    if "security" in card:
        out["security"] = security_requirements(card["security"])
    out["skills"] = [
        {**skill, "security": security_requirements(skill["security"])}
        if "security" in skill
        else skill
        for skill in card["skills"]
    ]
    return out


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


# --- the client's direction ------------------------------------------------------------------


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


def card_from_proto(result: Any) -> AgentCard:
    """The canonical card of a 0.3 proto AgentCard (the reverse of `proto_card`)."""
    card = proto_object(result, "")
    return AgentCard.model_validate(proto_card_security(dict(card), "security", card))


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
