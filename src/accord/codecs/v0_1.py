"""The A2A 0.1 JSON-RPC codec: `tasks/send` and its kin, `sessionId`, parts tagged by `type`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import Field
from pydantic_core import from_json, to_json

from accord.codecs.base import JsonRpcCodec, Method, params_object, validate
from accord.codecs.v0_1_json import (
    artifact_json,
    message_from,
    message_json,
    pick,
    push_config_from,
    push_config_json,
    status_json,
    task_json,
)
from accord.codecs.v0_3 import legacy_error
from accord.codecs.versions import ProtocolVersion
from accord.core.records import EventRecord, close_stream
from accord.errors import A2AError
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
    from accord.core.call_context import CallContext
    from accord.core.operations import Operations

    Follow = Callable[[Any, CallContext], Awaitable[AsyncIterator[EventRecord]]]

# --- requests --------------------------------------------------------------------------------


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


def get_push_request(params: Any) -> GetTaskPushNotificationConfigParams:
    request = task_id_request(params)
    return GetTaskPushNotificationConfigParams(
        id=request.id, push_notification_config_id=request.id
    )


# --- results ---------------------------------------------------------------------------------


def task_result(task: Task) -> bytes:
    return to_json(task_json(task.to_wire()))


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
            return {
                "id": event["id"],
                "status": status_json(event["status"]),
                "final": record.final,
            }
        if kind == "status-update":
            out = {"id": event["taskId"], "status": status_json(event["status"])}
            return {**out, "final": record.final, **pick(event, "metadata")}
        if kind == "artifact-update":
            artifact = event["artifact"]
            index = self._number(artifact["artifactId"])
            chunk = {**artifact_json(artifact, index), **pick(event, "append", "lastChunk")}
            return {
                "id": event["taskId"],
                "artifact": chunk,
                "final": False,
                **pick(event, "metadata"),
            }
        completed = {"state": TaskState.COMPLETED.value, "message": message_json(event)}
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
            lambda s: s.set_push_config, push_config_from, push_config_result
        ),
        "tasks/pushNotification/get": Method(
            lambda s: s.get_push_config, get_push_request, push_config_result
        ),
    }

    def error(self, error: A2AError) -> bytes:
        return legacy_error(error)
