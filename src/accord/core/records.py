"""EventRecord: one published event of a task, serialized once for every subscriber."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from accord.errors import A2AError
from accord.types import Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent, adapters

StreamItem = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent


@dataclass(slots=True)
class EventRecord:
    """An event of a task with its sequence number; never changed once made (not frozen:
    a frozen dataclass's constructor sets each field through `object.__setattr__`, and a
    task's every change makes one).

    `payload` is the event's JSON, computed once when the record is made. `final` marks the
    last record a stream carries (the task ended or waits for the client). `error` replaces
    the event when the request failed before any task existed. `encodings` keeps the event
    in other wire formats, each made once on first use, whatever the number of subscribers.
    """

    task_id: str
    seq: int
    event: StreamItem | None
    final: bool
    payload: bytes = field(repr=False)
    error: A2AError | None = None
    encodings: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ends_task(self) -> bool:
        """Whether the task is over after this record (or the request failed before one
        existed): where a subscription to the task ends. A `final` record that leaves the
        task waiting for the client ends a request's stream, not the task's."""
        if not self.final:
            return False
        event = self.event
        if isinstance(event, TaskStatusUpdateEvent):
            return event.status.state.is_terminal
        if isinstance(event, Task):  # the live task, which may have moved on since: as recorded
            return adapters.TASK.validate_json(self.payload).status.state.is_terminal
        return True  # a failure, or a plain reply: no task to follow

    @classmethod
    def of(cls, task_id: str, seq: int, event: StreamItem, *, final: bool) -> EventRecord:
        return cls(task_id, seq, event, final, event.to_json())

    @classmethod
    def decoded(cls, task_id: str, seq: int, payload: bytes, *, final: bool) -> EventRecord:
        """A record read back from a log that kept only its payload."""
        return cls(task_id, seq, adapters.STREAM_EVENT.validate_json(payload), final, payload)

    @classmethod
    def failure(cls, task_id: str, error: A2AError) -> EventRecord:
        return cls(task_id, 0, None, True, b"", error)


async def close_stream(records: AsyncIterator[EventRecord]) -> None:
    """Stop following a stream of records: `aclose` an async generator, `close` an Execution."""
    close = getattr(records, "aclose", None) or getattr(records, "close", None)
    if close is not None:
        result = close()
        if result is not None:
            await result


async def opened_stream(records: AsyncIterator[EventRecord]) -> AsyncIterator[EventRecord]:
    """`records` with their first one fetched: the A2AError of a stream refused before its
    first event (the first record's error, or one raised fetching it) is raised here, so that
    a binding can answer it as a plain error rather than as a stream holding it."""
    try:
        first = await anext(records, None)
        if first is not None and first.error is not None:
            raise first.error
    except BaseException:
        await close_stream(records)
        raise
    return _chained(first, records)


async def _chained(
    first: EventRecord | None, records: AsyncIterator[EventRecord]
) -> AsyncIterator[EventRecord]:
    try:
        if first is not None:
            yield first
            async for record in records:
                yield record
    finally:
        await close_stream(records)
