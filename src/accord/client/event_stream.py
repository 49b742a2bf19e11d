"""EventStream: the events of a streaming call, closing the HTTP response when left early."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from types import TracebackType

from accord.types import StreamEvent


class EventStream(AsyncIterator[StreamEvent]):
    """An async iterator of stream events; also an async context manager that closes it.

    The iterator ends when the server ends the stream. Leave early with `async with` (or call
    `aclose()`) to release the connection at once rather than when the stream is collected.
    """

    def __init__(self, events: AsyncGenerator[StreamEvent, None]) -> None:
        self._events = events

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> StreamEvent:
        return await anext(self._events)

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
