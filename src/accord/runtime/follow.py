"""Following tasks: a request's own run (Execution), and any task live, caught up from its log."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator

from accord.core.records import EventRecord
from accord.errors import TaskNotFound, UnsupportedOperation
from accord.runtime.bus import EventBus, StreamOverrun, Subscription
from accord.runtime.runs import Run, Runs
from accord.store import StoredTask, TaskStore
from accord.types import Task

CATCH_UP = 256
"""Records a reader catching up reads from the log at a time."""
# Generators of closed executions being closed: kept until done, so none is collected first.
_closing: set[asyncio.Future[None]] = set()


class Follower:
    """Reads tasks as they stand (a live run's, else the store's) and follows their changes
    on the bus, reading what a reader missed from the task's log."""

    def __init__(self, store: TaskStore, bus: EventBus, runs: Runs) -> None:
        self.store = store
        self.bus = bus
        self.runs = runs

    async def current(self, task_id: str, owner: str | None = None) -> tuple[Task, int]:
        """The task as it stands now, and its last event's number: as the run of this replica
        holding it has it, else as stored (TaskNotFound for another caller than `owner`)."""
        run = self.runs.live(task_id, owner)
        if run is not None:
            assert run.task is not None
            return run.task, run.seq
        stored = await self.stored(task_id, owner)
        return stored.task, stored.seq

    async def stored(self, task_id: str, owner: str | None) -> StoredTask:
        """The task as stored; TaskNotFound when there is none (of `owner`, when given)."""
        stored = await self.store.get(task_id, owner)
        if stored is None:
            raise TaskNotFound(f"no task with id {task_id!r}")
        return stored

    async def watch(
        self, task_id: str, after_seq: int | None = None, owner: str | None = None
    ) -> AsyncGenerator[EventRecord, None]:
        """Follow a task until it ends (see `TaskRuntime.watch`)."""
        while True:
            subscription = self.bus.subscribe(task_id)
            try:
                async for record in self._follow(subscription, task_id, after_seq, owner):
                    yield record
                    after_seq = record.seq
                return
            except (StreamOverrun, _LostOnTheBus):
                continue  # from the log, after the last record yielded
            finally:
                subscription.close()

    async def _follow(
        self, subscription: Subscription, task_id: str, after_seq: int | None, owner: str | None
    ) -> AsyncIterator[EventRecord]:
        """One round of `watch` on `subscription`: what the log holds after `after_seq` (or
        the task as it is now), then live records until the task ends."""
        if after_seq is None:
            task, seq = await self.current(task_id, owner)
        else:  # measured against the log: a live run's task can be ahead of its saves
            stored = await self.stored(task_id, owner)
            task, seq = stored.task, stored.seq
        # As of now: a store may hand out the live task, which moves on while this goes.
        ended = task.status.state.is_terminal
        missed = [] if after_seq is None else await self._logged(task_id, after_seq)
        if after_seq is not None and (
            missed[0].seq == after_seq + 1 if missed else after_seq >= seq
        ):
            last = after_seq
            while missed:
                if missed[0].seq != last + 1:
                    # The log's bound dropped what this reader had not read yet while it read
                    # (an agent far ahead): the task as it stands now holds what it missed.
                    task, seq = await self.current(task_id, owner)
                    ended = task.status.state.is_terminal
                    yield EventRecord.of(task_id, seq, task, final=ended)
                    if ended:
                        return
                    last = seq
                    break
                for record in missed:
                    yield record
                    last = record.seq
                    if record.ends_task:
                        return
                missed = await self._logged(task_id, last) if len(missed) == CATCH_UP else []
            if ended and last >= seq:
                if last == after_seq:  # the caller has seen the end already
                    raise _nothing_to_follow(task)
                return
        else:
            if ended:
                raise _nothing_to_follow(task)
            # Not final even when the task waits for input: this stream goes on.
            yield EventRecord.of(task_id, seq, task, final=False)
            last = seq
        while True:
            record = await self._next_live(subscription, last)
            if record.seq <= last:
                continue
            if record.seq > last + 1:
                raise _LostOnTheBus  # the records between are in the log
            yield record
            last = record.seq
            if record.ends_task:
                return

    async def _next_live(self, subscription: Subscription, last: int) -> EventRecord:
        """The subscription's next record. A bus between replicas can lose one; the last
        record of a task, lost, would leave this waiting forever: while nothing comes for the
        bus's `log_check_after` seconds, the log is checked for a record after `last`."""
        quiet = self.bus.log_check_after
        while True:
            if quiet is None or subscription.pending:  # no timer for a record already here
                return await anext(subscription)
            try:
                async with asyncio.timeout(quiet):
                    return await anext(subscription)
            except TimeoutError:
                if await self.store.events_after(subscription.task_id, last, limit=1):
                    raise _LostOnTheBus from None

    async def _logged(self, task_id: str, after_seq: int) -> list[EventRecord]:
        """The next page of a task's log after `after_seq` (CATCH_UP records at most)."""
        return await self.store.events_after(task_id, after_seq, limit=CATCH_UP)


class Execution(AsyncIterator[EventRecord]):
    """The records of one request's run, from its first event to its final one."""

    def __init__(self, follower: Follower, run: Run, subscription: Subscription) -> None:
        self.task_id = run.task_id
        self._follower = follower
        self._run = run
        self._subscription = subscription
        # Where the records come from after the subscription fell behind: the task's log.
        self._catching_up: AsyncGenerator[EventRecord, None] | None = None
        self._done = False

    @property
    def task(self) -> Task | None:
        """The task as this run holds it (None until the agent created one): what the store
        has, without reading it back."""
        return self._run.task

    @property
    def ended_json(self) -> bytes | None:
        """The JSON of `task` once it ended (None before): what the store was given."""
        return self._run.ended_json

    async def __anext__(self) -> EventRecord:
        if self._done:
            raise StopAsyncIteration
        if self._catching_up is not None:
            record = await anext(self._catching_up)
        else:
            try:
                record = await anext(self._subscription)
            except StreamOverrun as overrun:  # the rest from the log, then live again
                self._subscription.close()
                seen = overrun.data["lastEventId"]
                self._catching_up = self._follower.watch(self.task_id, after_seq=seen)
                record = await anext(self._catching_up)
        if record.final:
            self.close()
        return record

    def skip_to_final(self) -> None:
        """From now on, yield only the final record: the reply, the error, or the task as it
        ended or paused for the client."""
        self._subscription.finals_only = True

    def close(self) -> None:
        """Stop watching; the agent keeps running."""
        self._done = True
        self._subscription.close()
        if self._catching_up is not None:
            _closing.add(task := asyncio.ensure_future(self._catching_up.aclose()))
            task.add_done_callback(_closing.discard)


class _LostOnTheBus(Exception):
    """The bus lost records of the followed task: `watch` reads them from its log."""


def _nothing_to_follow(task: Task) -> UnsupportedOperation:
    state = task.status.state.value
    return UnsupportedOperation(f"task {task.id} is {state}; there is nothing to follow")
