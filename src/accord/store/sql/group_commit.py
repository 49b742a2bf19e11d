"""Group commit: writes queued while one transaction runs are committed together in the next."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")

Outcome = BaseException | None
"""What one queued item came to: None when it was committed, else the error it raised."""


class GroupCommit(Generic[Item]):
    """One writer for a store: callers queue items and await their own outcome.

    A single flusher task takes everything queued so far as one batch and hands it to
    `commit`, which writes the batch in one transaction and returns one outcome per item (an
    item can fail, say stale, without aborting the others). Whatever is queued while that
    transaction runs forms the next batch. When `commit` raises, the batch is retried one
    item at a time, so an error lands on the item that caused it and nowhere else. An item
    whose caller was cancelled while waiting may still be committed.
    """

    def __init__(self, commit: Callable[[Sequence[Item]], Awaitable[list[Outcome]]]) -> None:
        self._commit = commit
        self._queue: list[tuple[Item, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def submit(self, item: Item) -> None:
        """Queue `item` and wait until it is committed; raises the error it failed with."""
        await self.enqueue(item)

    def enqueue(self, item: Item) -> asyncio.Future[None]:
        """Queue `item` now; the future completes once it is committed (or with its error).
        Items are committed in the order they were queued."""
        outcome = asyncio.get_running_loop().create_future()
        self._queue.append((item, outcome))
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())
        return outcome

    async def drain(self) -> None:
        """Wait until everything queued so far is written (or has failed)."""
        if self._flusher is not None:
            await asyncio.shield(self._flusher)

    async def _flush(self) -> None:
        batch: list[tuple[Item, asyncio.Future[None]]] = []
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                items = [item for item, _ in batch]
                try:
                    outcomes = await self._commit(items)
                except Exception:
                    outcomes = [await self._alone(item) for item in items]
                for (_, waiter), outcome in zip(batch, outcomes, strict=True):
                    if waiter.done():  # its caller was cancelled
                        continue
                    if outcome is None:
                        waiter.set_result(None)
                    else:
                        waiter.set_exception(outcome)
        except BaseException as error:  # the flusher itself was cancelled: fail every waiter
            for _, waiter in batch + self._queue:
                if not waiter.done():
                    waiter.set_exception(error)
            self._queue = []
            raise
        finally:
            self._flusher = None

    async def _alone(self, item: Item) -> Outcome:
        try:
            [outcome] = await self._commit([item])
        except Exception as error:
            return error
        return outcome
