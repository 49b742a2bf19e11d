"""The A2A 0.1 JSON-RPC codec: `tasks/send` and its kin, `sessionId`, parts tagged by `type`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import Field
from pydantic_core import from_json, to_json

from accord.codecs.base import JsonRpcCodec, Method, field_error, params_object, validate
from accord.codecs.v0_3 import legacy_error
from accord.codecs.versions import ProtocolVersion
from accord.errors import A2AError
from accord.runtime.records import EventRecord
from accord.server.sse import close_stream
from accord.types import (
    A2AModel,
    GetTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Metadata,
    PushNotificationConfig,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatus,
    new_id,
    utc_now,
)

if TYPE_CHECKING:
    from accord.server.call_context import CallContext
    from accord.server.service import A2AService

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
    if not isinstance(value, dict):
        raise field_error(path, "must be an object")
    parts = value.get("parts")
    if not isinstance(parts, list):
        raise field_error(f"{path}.parts", "must be a list of parts")
    message = {k: value[k] for k in ("role", "metadata") if k in value}
    message["messageId"] = value.get("messageId") or new_id()
    message["parts"] = [_part_from(part, f"{path}.parts.{i}") for i, part in enumerate(parts)]
    return message


def _part_from(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise field_error(path, "must be an object")
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


def push_config_result(config: TaskPushNotificationConfig) -> bytes:
    webhook = config.push_notification_config.to_wire()
    webhook.pop("id", None)
    return to_json({"id": config.task_id, "pushNotificationConfig": webhook})


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


# --- operations: the service's, adapted to what 0.1 means --------------------------------------


def _send(service: A2AService) -> Callable[[MessageSendParams, CallContext], Awaitable[Task]]:
    async def send(params: MessageSendParams, call: CallContext) -> Task:
        result = await service.send_message(params, call, create_if_missing=True)
        return result if isinstance(result, Task) else _replied(params.message, result)

    return send


def _replied(request: Message, reply: Message) -> Task:
    """The task a plain reply completes: 0.1 always answers with the task the client named."""
    assert request.task_id is not None
    status = TaskStatus(state=TaskState.COMPLETED, message=reply, timestamp=utc_now())
    context_id = reply.context_id or request.context_id or new_id()
    return Task(id=request.task_id, context_id=context_id, status=status, history=[request])


def _send_subscribe(service: A2AService) -> Follow:
    async def send_subscribe(
        params: MessageSendParams, call: CallContext
    ) -> AsyncIterator[EventRecord]:
        records = await service.stream_message(params, call, create_if_missing=True)
        return _rendered(records, EventRenderer())

    return send_subscribe


def _resubscribe(service: A2AService) -> Follow:
    async def resubscribe(params: TaskIdParams, call: CallContext) -> AsyncIterator[EventRecord]:
        # A stream resumed after Last-Event-ID replays the events it missed without the task,
        # whose artifacts the renderer must know to number new ones: it starts from the task.
        task = await service.get_task(TaskQueryParams(id=params.id, history_length=0), call)
        return _rendered(await service.resubscribe(params, call), EventRenderer(task))

    return resubscribe


class V01Codec(JsonRpcCodec):
    """JSON-RPC as A2A 0.1 defined it (the first public drafts of the protocol)."""

    version = ProtocolVersion.V0_1
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
