"""A run's records between saving and publishing: published in order once their saves commit."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from accord.core.records import EventRecord

Publish = Callable[[EventRecord], Awaitable[None]]

AHEAD = 256
"""Records a run may have staged, saved or not, before it waits for them to be published."""


class PublishQueue:
    """Publishes the records of one run in order, each once the store has committed it.

    The run stages each record's save with the store (which commits one task's saves in the
    order staged) and goes on while the save is in flight, up to AHEAD records (then it waits
    until half of them are published, so the store always has the next batch queued): a long
    stream then commits many chunks per transaction instead of waiting for one commit per
    chunk, and still nothing is published that the store could lose. A save that fails ends
    the queue: what was staged after it is never published (those saves fail as well), and
    the run's next `put` raises the error.
    """

    def __init__(self) -> None:
        # Each record with how to publish it: the queue keeps no reference to its run (which
        # holds the queue) once the records are out, so a finished run is freed at once.
        self._staged: deque[tuple[EventRecord, asyncio.Future[None], Publish]] = deque()
        self._worker: asyncio.Task[None] | None = None
        self._error: Exception | None = None
        self._room = asyncio.Event()

    async def put(
        self, record: EventRecord, saved: asyncio.Future[None], publish: Publish, *, wait: bool
    ) -> None:
        """`publish` `record` once `saved` completes; with `wait`, return only once it and
        everything before it is published (with AHEAD staged: once half of them are)."""
        if self._error is not None:
            raise self._error
        if not self._staged and (wait or saved.done()):  # nothing in flight: no need to queue
            await saved
            await publish(record)
            return
        self._staged.append((record, saved, publish))
        if self._worker is None:
            self._worker = asyncio.create_task(self._drain())
        if wait:
            await asyncio.shield(self._worker)
            if self._error is not None:
                raise self._error
        elif len(self._staged) >= AHEAD:  # until half are published: the store keeps busy
            self._room.clear()
            await self._room.wait()

    async def _drain(self) -> None:
        try:
            while self._staged:
                record, saved, publish = self._staged[0]
                try:
                    await saved
                    await publish(record)
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
