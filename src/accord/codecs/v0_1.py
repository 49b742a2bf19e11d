"""The A2A 0.1 JSON-RPC codec: `tasks/send` and its kin, `sessionId`, parts tagged by `type`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from pydantic import Field
from pydantic_core import from_json, to_json

from accord.codecs.base import (
    ClientCall,
    ClientCodec,
    JsonRpcCodec,
    Method,
    field_error,
    ignored,
    params_object,
    validate,
)
from accord.codecs.v0_3 import error_from_object, legacy_error
from accord.codecs.versions import ProtocolVersion
from accord.core.records import EventRecord, close_stream
from accord.errors import A2AClientError, A2AError
from accord.types import (
    A2AModel,
    GetTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Metadata,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    adapters,
    new_id,
    utc_now,
)

if TYPE_CHECKING:
    from accord.core.call_context import CallContext
    from accord.core.operations import Operations

    Follow = Callable[[Any, CallContext], Awaitable[AsyncIterator[EventRecord]]]

# 0.1 differs from 0.3 in names and shapes only: a task's `sessionId` is 0.3's `contextId`, a
# part's `type` its `kind`, an artifact has an `index` (its place in the task) where 0.3 has
# an `artifactId`; events name their task `id`. The client chooses the id of a new task, and
# a task has one webhook, kept here as the config whose id is the task's id.

# --- requests --------------------------------------------------------------------------------

_PART_TYPES = ("text", "file", "data")


class TaskSendParams(A2AModel):
    """0.1 TaskSendParams: the task the message is for (`id`, chosen by the client) and more.

    The message is converted on its own (see `message_from`).
    """

    id: str = Field(min_length=1)
    session_id: str | None = None
    message: dict[str, Any]
    accepted_output_modes: list[str] | None = None
    push_notification: PushNotificationConfig | None = None
    history_length: int | None = Field(default=None, ge=0)
    metadata: Metadata | None = None


class LegacyTaskPushNotificationConfig(A2AModel):
    """0.1 TaskPushNotificationConfig: a task (`id`) and its webhook."""

    id: str = Field(min_length=1)
    push_notification_config: PushNotificationConfig


def message_from(value: Any, path: str = "message") -> dict[str, Any]:
    """The 0.3 JSON of a 0.1 message: a `kind` for each part, an id for the message."""
    value = _object(value, path)
    message = {k: value[k] for k in ("role", "metadata") if k in value}
    message["messageId"] = value.get("messageId") or new_id()
    message["parts"] = _parts_from(value, path)
    return message


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise field_error(path, "must be an object")
    return value


def _list_of(value: dict[str, Any], name: str, path: str) -> list[Any]:
    """The list `value[name]` (of `name`, at `path`), or InvalidParams naming the field."""
    items = value.get(name)
    if not isinstance(items, list):
        raise field_error(f"{path}.{name}" if path else name, f"must be a list of {name}")
    return items


def _parts_from(value: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """The 0.3 JSON of the `parts` of a 0.1 message or artifact at `path`."""
    parts = _list_of(value, "parts", path)
    return [_part_from(part, f"{path}.parts.{i}") for i, part in enumerate(parts)]


def _part_from(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    kind = value.get("type")
    if kind not in _PART_TYPES:
        found = "is missing" if kind is None else f"{kind!r} is not a part type"
        raise field_error(f"{path}.type", f"{found}; a part is of type text, file or data")
    return {**{k: v for k, v in value.items() if k != "type"}, "kind": kind}


def send_request(params: Any) -> MessageSendParams:
    """`tasks/send` and `tasks/sendSubscribe`: the message goes to the task the client named."""
    request = validate(TaskSendParams, params_object(params))
    wire = message_from(request.message)
    wire.update(taskId=request.id, contextId=request.session_id or None)
    push = request.push_notification
    return MessageSendParams(
        message=validate(Message, wire, "message"),
        configuration=MessageSendConfiguration(
            accepted_output_modes=request.accepted_output_modes,
            history_length=request.history_length,
            push_notification_config=push.model_copy(update={"id": request.id}) if push else None,
        ),
        metadata=request.metadata,
    )


def task_query_request(params: Any) -> TaskQueryParams:
    """`tasks/get` and `tasks/resubscribe` (whose history length is not used)."""
    return validate(TaskQueryParams, params_object(params))


def task_id_request(params: Any) -> TaskIdParams:
    return validate(TaskIdParams, params_object(params))


def set_push_request(params: Any) -> TaskPushNotificationConfig:
    request = validate(LegacyTaskPushNotificationConfig, params_object(params))
    config = request.push_notification_config.model_copy(update={"id": request.id})
    return TaskPushNotificationConfig(task_id=request.id, push_notification_config=config)


def get_push_request(params: Any) -> GetTaskPushNotificationConfigParams:
    request = task_id_request(params)
    return GetTaskPushNotificationConfigParams(
        id=request.id, push_notification_config_id=request.id
    )


# --- results ---------------------------------------------------------------------------------

# The states 0.1 does not have, as the nearest ones it has.
_STATES = {TaskState.REJECTED.value: "failed", TaskState.AUTH_REQUIRED.value: "input-required"}


def _pick(obj: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: obj[name] for name in names if name in obj}


def _part(part: dict[str, Any]) -> dict[str, Any]:
    return {"type": part["kind"], **{k: v for k, v in part.items() if k != "kind"}}


def _message(message: dict[str, Any]) -> dict[str, Any]:
    return {**_pick(message, "role", "metadata"), "parts": [_part(p) for p in message["parts"]]}


def _status(status: dict[str, Any]) -> dict[str, Any]:
    out = {"state": _STATES.get(status["state"], status["state"])}
    if "message" in status:
        out["message"] = _message(status["message"])
    return {**out, **_pick(status, "timestamp")}


def _artifact(artifact: dict[str, Any], index: int) -> dict[str, Any]:
    out = _pick(artifact, "name", "description")
    out["parts"] = [_part(p) for p in artifact["parts"]]
    return {**out, "index": index, **_pick(artifact, "metadata")}


def task_json(task: dict[str, Any]) -> dict[str, Any]:
    """A task's 0.3 JSON as 0.1 JSON."""
    out = {"id": task["id"], "sessionId": task["contextId"], "status": _status(task["status"])}
    if "artifacts" in task:
        out["artifacts"] = [_artifact(a, i) for i, a in enumerate(task["artifacts"])]
    if "history" in task:
        out["history"] = [_message(m) for m in task["history"]]
    return {**out, **_pick(task, "metadata")}


def task_result(task: Task) -> bytes:
    return to_json(task_json(task.to_wire()))


def _webhook(config: PushNotificationConfig) -> dict[str, Any]:
    """A webhook as 0.1 JSON, which has no id for it (a task has one webhook)."""
    webhook = config.to_wire()
    webhook.pop("id", None)
    return webhook


def push_config_json(config: TaskPushNotificationConfig) -> dict[str, Any]:
    """A task's webhook as 0.1 JSON: the task's `id` and the webhook."""
    return {
        "id": config.task_id,
        "pushNotificationConfig": _webhook(config.push_notification_config),
    }


def push_config_result(config: TaskPushNotificationConfig) -> bytes:
    return to_json(push_config_json(config))


class EventRenderer:
    """Renders the records of one stream as 0.1 events.

    0.1 numbers a task's artifacts (`index`): their places in the task, which lists them in
    the order they first appeared. The renderer knows those of `task` (the task as the stream
    starts, if known) and of a task the stream opens with, and numbers each new one next. A
    task (the first record of a stream) is told as a status update, as is a plain reply
    message: 0.1 tasks always end with a status, so a reply completes the task the client
    named.
    """

    def __init__(self, task: Task | None = None) -> None:
        self._indexes: dict[str, int] = {}
        if task is not None:
            for artifact in task.artifacts or ():
                self._number(artifact.artifact_id)

    def _number(self, artifact_id: str) -> int:
        return self._indexes.setdefault(artifact_id, len(self._indexes))

    def render(self, record: EventRecord) -> dict[str, Any]:
        event = from_json(record.payload)  # not record.event: a task snapshot is the live task
        kind = event["kind"]
        if kind == "task":
            for artifact in event.get("artifacts", ()):
                self._number(artifact["artifactId"])
            return {"id": event["id"], "status": _status(event["status"]), "final": record.final}
        if kind == "status-update":
            out = {"id": event["taskId"], "status": _status(event["status"])}
            return {**out, "final": record.final, **_pick(event, "metadata")}
        if kind == "artifact-update":
            artifact = event["artifact"]
            index = self._number(artifact["artifactId"])
            chunk = {**_artifact(artifact, index), **_pick(event, "append", "lastChunk")}
            return {
                "id": event["taskId"],
                "artifact": chunk,
                "final": False,
                **_pick(event, "metadata"),
            }
        completed = {"state": TaskState.COMPLETED.value, "message": _message(event)}
        return {
            "id": record.task_id,
            "status": {**completed, "timestamp": utc_now()},
            "final": True,
        }


STREAM_ENCODING = "0.1"
"""The key of a record's 0.1 event JSON in `EventRecord.encodings` (one stream's own copy)."""


async def _rendered(
    records: AsyncIterator[EventRecord], renderer: EventRenderer
) -> AsyncIterator[EventRecord]:
    """The records of a stream, each carrying its 0.1 event, rendered in order by `renderer`.

    Copies, not the published records: the renderer of each stream numbers artifacts anew.
    """
    try:
        async for record in records:
            if record.error is None:
                event = to_json(renderer.render(record))
                record = replace(record, encodings={STREAM_ENCODING: event})
            yield record
    finally:
        await close_stream(records)


def stream_result(record: EventRecord) -> bytes:
    return record.encodings[STREAM_ENCODING]


# --- operations: the common ones, adapted to what 0.1 means -------------------------------------


def _send(operations: Operations) -> Callable[[MessageSendParams, CallContext], Awaitable[Task]]:
    async def send(params: MessageSendParams, call: CallContext) -> Task:
        result = await operations.send_message(params, call, create_if_missing=True)
        return result if isinstance(result, Task) else _replied(params.message, result)

    return send


def _replied(request: Message, reply: Message) -> Task:
    """The task a plain reply completes: 0.1 always answers with the task the client named."""
    assert request.task_id is not None
    status = TaskStatus(state=TaskState.COMPLETED, message=reply, timestamp=utc_now())
    context_id = reply.context_id or request.context_id or new_id()
    return Task(id=request.task_id, context_id=context_id, status=status, history=[request])


def _send_subscribe(operations: Operations) -> Follow:
    async def send_subscribe(
        params: MessageSendParams, call: CallContext
    ) -> AsyncIterator[EventRecord]:
        records = await operations.stream_message(params, call, create_if_missing=True)
        return _rendered(records, EventRenderer())

    return send_subscribe


def _resubscribe(operations: Operations) -> Follow:
    async def resubscribe(params: TaskIdParams, call: CallContext) -> AsyncIterator[EventRecord]:
        # A stream resumed after Last-Event-ID replays the events it missed without the task,
        # whose artifacts the renderer must know to number new ones: it starts from the task.
        task = await operations.get_task(TaskQueryParams(id=params.id, history_length=0), call)
        return _rendered(await operations.resubscribe(params, call), EventRenderer(task))

    return resubscribe


class V01Codec(JsonRpcCodec):
    """JSON-RPC as A2A 0.1 defined it (the first public drafts of the protocol)."""

    version = ProtocolVersion.V0_1
    refused_stream_as_event = True
    methods = {
        "tasks/send": Method(_send, send_request, task_result),
        "tasks/sendSubscribe": Method(_send_subscribe, send_request, stream_result, streaming=True),
        "tasks/get": Method(lambda s: s.get_task, task_query_request, task_result),
        "tasks/cancel": Method(lambda s: s.cancel_task, task_id_request, task_result),
        "tasks/resubscribe": Method(
            _resubscribe, task_query_request, stream_result, streaming=True
        ),
        "tasks/pushNotification/set": Method(
            lambda s: s.set_push_config, set_push_request, push_config_result
        ),
        "tasks/pushNotification/get": Method(
            lambda s: s.get_push_config, get_push_request, push_config_result
        ),
    }

    def error(self, error: A2AError) -> bytes:
        return legacy_error(error)


# --- the client's direction: canonical requests as 0.1 JSON, 0.1 results as canonical ----------

# 0.1 messages carry no ids: a message received gets a new `messageId`. An artifact's
# `artifactId` is its 0.1 `index` (as text), so a task's artifacts and the updates of a stream
# name them alike. 0.1 events do not name their task's session, so a stream's events are
# decoded knowing it (`in_session`); the 0.1 transport learns it before the stream starts.


def send_fields(params: MessageSendParams) -> dict[str, Any]:
    """The 0.1 TaskSendParams of a canonical send: the message's task id is the `id` (a new
    task's, chosen here, when it names none) and its context id the `sessionId`.

    A2AClientError for a non-blocking send: `tasks/send` always answers with the task done or
    waiting for input (`tasks/sendSubscribe` follows it instead).
    """
    configuration = params.configuration or MessageSendConfiguration()
    if configuration.blocking is False:
        raise A2AClientError(
            "A2A 0.1 has no non-blocking send: tasks/send answers when the task is done or"
            " waits for input; stream the message to follow the task instead"
        )
    message = params.message
    push = configuration.push_notification_config
    fields = {
        "id": message.task_id or new_id(),
        "sessionId": message.context_id,
        "message": _message(message.to_wire()),
        "acceptedOutputModes": configuration.accepted_output_modes,
        "historyLength": configuration.history_length,
        "pushNotification": _webhook(push) if push else None,
        "metadata": params.metadata,
    }
    return {name: value for name, value in fields.items() if value is not None}


def _push_config_id(params: GetTaskPushNotificationConfigParams) -> dict[str, Any]:
    """`tasks/pushNotification/get` names the task alone: its one webhook has the task's id."""
    wanted = params.push_notification_config_id
    if wanted not in (None, params.id):
        raise A2AClientError(
            f"A2A 0.1 has one webhook per task, whose id is the task's ({params.id!r}),"
            f" not {wanted!r}"
        )
    return {"id": params.id}


def _status_from(value: Any, path: str) -> dict[str, Any]:
    status = _object(value, path)
    if status.get("message") is None:
        return {k: v for k, v in status.items() if k != "message"}
    return {**status, "message": message_from(status["message"], f"{path}.message")}


def _artifact_from(value: Any, path: str, index: int) -> dict[str, Any]:
    """The 0.3 JSON of a 0.1 artifact (without 0.1's `append` and `lastChunk`): its `index`
    (else `index`, its place in the list it is in) is its id."""
    artifact = _object(value, path)
    return {
        "artifactId": str(artifact.get("index", index)),
        **_pick(artifact, "name", "description", "metadata"),
        "parts": _parts_from(artifact, path),
    }


def task_from(value: Any) -> Task:
    """A 0.1 task (a result) as a canonical Task; its `sessionId` is the context id."""
    task = _object(value, "result")
    out = {
        **_pick(task, "id", "metadata"),
        "contextId": task.get("sessionId") or "",
        "status": _status_from(task.get("status"), "status"),
    }
    if task.get("artifacts") is not None:
        artifacts = enumerate(_list_of(task, "artifacts", ""))
        out["artifacts"] = [_artifact_from(a, f"artifacts.{i}", i) for i, a in artifacts]
    if task.get("history") is not None:
        history = enumerate(_list_of(task, "history", ""))
        out["history"] = [message_from(m, f"history.{i}") for i, m in history]
    return adapters.TASK.validate_python(out)


def event_from(value: Any, context_id: str) -> StreamEvent:
    """A 0.1 stream event as a canonical status or artifact update of a task in `context_id`."""
    event = _object(value, "result")
    common = {"taskId": event.get("id"), "contextId": context_id, **_pick(event, "metadata")}
    if "artifact" in event:
        artifact = _object(event["artifact"], "artifact")
        return TaskArtifactUpdateEvent.model_validate(
            {
                **common,
                "artifact": _artifact_from(artifact, "artifact", 0),
                **_pick(artifact, "append", "lastChunk"),
            }
        )
    return TaskStatusUpdateEvent.model_validate(
        {
            **common,
            "status": _status_from(event.get("status"), "status"),
            "final": event.get("final") or False,
        }
    )


def in_session(call: ClientCall[Any, StreamEvent], context_id: str) -> ClientCall[Any, StreamEvent]:
    """A streaming call whose events are decoded as those of a task in `context_id`."""
    return replace(call, decode=partial(event_from, context_id=context_id))


def _not_in_0_1(name: str, what: str) -> ClientCall[Any, Any]:
    """An operation 0.1 does not have: calling it raises A2AClientError before sending."""

    def refuse(params: Any) -> None:
        raise A2AClientError(
            f"{what} is not part of A2A 0.1, the version this agent's interface speaks"
        )

    return ClientCall(name, refuse, ignored)


CLIENT: ClientCodec[None] = ClientCodec(
    version=ProtocolVersion.V0_1,
    send=ClientCall("tasks/send", send_fields, task_from),
    stream=ClientCall("tasks/sendSubscribe", send_fields, partial(event_from, context_id="")),
    get_task=ClientCall("tasks/get", A2AModel.to_wire, task_from),
    cancel_task=ClientCall("tasks/cancel", A2AModel.to_wire, task_from),
    resubscribe=ClientCall(
        "tasks/resubscribe", A2AModel.to_wire, partial(event_from, context_id="")
    ),
    set_push_config=ClientCall("tasks/pushNotification/set", push_config_json, set_push_request),
    get_push_config=ClientCall("tasks/pushNotification/get", _push_config_id, set_push_request),
    list_push_configs=_not_in_0_1(
        "tasks/pushNotificationConfig/list", "listing a task's push configs"
    ),
    delete_push_config=_not_in_0_1(
        "tasks/pushNotificationConfig/delete", "deleting a task's push config"
    ),
    get_extended_card=_not_in_0_1(
        "agent/getAuthenticatedExtendedCard", "the authenticated extended card"
    ),
    error=error_from_object,
)
"""A2A 0.1 JSON-RPC as a client calls it. Stream events decode with an empty context id until
the transport puts the call `in_session` (JsonRpcV01Transport does, for every stream)."""
