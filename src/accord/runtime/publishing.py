"""A run's records between saving and publishing: published in order once their saves commit."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from accord.core.records import EventRecord

Publish = Callable[[EventRecord], Awaitable[None]]

AHEAD = 256
"""Records a run may have staged, saved or not, before it waits for them to be published."""


class PublishQueue:
    """Publishes the records of one run in order, each once the store has committed it.

    The run stages its records' saves with the store (which commits one task's saves in the
    order staged), hands them here (`add`) and goes on while the saves are in flight, up to
    AHEAD records (`settle` then waits until half of them are published, so the store always
    has the next batch queued): many records commit per transaction instead of one commit
    each, and still nothing is published that the store could lose. A save that fails ends
    the queue: what was staged after it is never published (those saves fail as well), and
    the run's next `settle` raises the error.
    """

    def __init__(self, publish: Publish) -> None:
        self._publish = publish
        # Each record with its save: the queue keeps no reference to its run (which holds the
        # queue) once the records are out, so a finished run is freed at once.
        self._staged: deque[tuple[EventRecord, asyncio.Future[None]]] = deque()
        self._worker: asyncio.Task[None] | None = None
        self._error: Exception | None = None
        self._room = asyncio.Event()

    def add(self, records: Sequence[EventRecord], saved: asyncio.Future[None]) -> None:
        """Publish `records`, in order after those added before, once `saved` completes."""
        if self._error is not None:
            return  # `settle` raises it; these are never published
        self._staged.extend((record, saved) for record in records)
        if self._worker is None:
            self._worker = asyncio.create_task(self._drain())

    async def settle(self, *, everything: bool) -> None:
        """With `everything`, return once every record added is published; else once fewer
        than AHEAD wait (with AHEAD waiting: once half of them are out). Raises the error of
        a save that failed."""
        if everything and self._worker is not None:
            await asyncio.shield(self._worker)
        elif len(self._staged) >= AHEAD:
            self._room.clear()
            await self._room.wait()
        if self._error is not None:
            raise self._error

    async def _drain(self) -> None:
        try:
            while self._staged:
                record, saved = self._staged[0]
                try:
                    await saved
                    await self._publish(record)
                except Exception as error:
                    self._error = error
                    self._staged.clear()
                    return
                self._staged.popleft()
                if len(self._staged) <= AHEAD // 2:
                    self._room.set()
        finally:
            self._worker = None
            self._room.set()
