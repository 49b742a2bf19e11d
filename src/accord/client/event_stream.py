"""EventStream and SyncEventStream: the events of a streaming call, and where it broke off."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from types import TracebackType

from accord.types import StreamEvent

IdentifiedEvents = AsyncGenerator[tuple[StreamEvent, int | None], None]
"""Stream events, each with the stream's last event id when it arrived (None: none yet)."""


class EventStream(AsyncIterator[StreamEvent]):
    """An async iterator of stream events; also an async context manager that closes it.

    The iterator ends when the server ends the stream. Leave early with `async with` (or call
    `aclose()`) to release the connection at once rather than when the stream is collected.
    `last_event_id` is the id of the last event received: pass it to
    `Client.resubscribe(task_id, last_event_id=...)` to get exactly the events that followed.
    """

    def __init__(self, events: IdentifiedEvents) -> None:
        self._events = events
        self._last_event_id: int | None = None

    @property
    def last_event_id(self) -> int | None:
        """The `id:` of the last event received (None before the first, or for a reply)."""
        return self._last_event_id

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> StreamEvent:
        event, event_id = await anext(self._events)
        if event_id is not None:
            self._last_event_id = event_id
        return event

    async def aclose(self) -> None:
        """Stop following the stream and close its HTTP response."""
        await self._events.aclose()

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


class SyncEventStream(Iterator[StreamEvent]):
    """The blocking twin of EventStream: a plain iterator, and a context manager closing it.

    Leaving a `for` loop early ends the stream once the iterator is collected; `with` (or
    `close()`) ends it at once.
    """

    def __init__(self, events: Generator[tuple[StreamEvent, int | None], None, None]) -> None:
        self._events = events
        self._last_event_id: int | None = None

    @property
    def last_event_id(self) -> int | None:
        """The `id:` of the last event received (None before the first, or for a reply)."""
        return self._last_event_id

    def __iter__(self) -> SyncEventStream:
        return self

    def __next__(self) -> StreamEvent:
        event, event_id = next(self._events)
        if event_id is not None:
            self._last_event_id = event_id
        return event

    def close(self) -> None:
        """Stop following the stream and close its HTTP response."""
        self._events.close()

    def __enter__(self) -> SyncEventStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
