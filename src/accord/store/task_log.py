"""TaskLog: the interface to tasks and their event log, with the one way saves are staged."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from asyncio import Future
from collections.abc import Awaitable, Callable, Sequence

from accord.core.deliveries import Delivery
from accord.core.futures import mark_seen
from accord.core.principal import ANONYMOUS_OWNER
from accord.core.query import TaskPage, TaskQuery
from accord.core.records import EventRecord
from accord.store.stored import StoredTask
from accord.types import Task


class TaskLog(ABC):
    """Tasks and their event logs.

    The runtime saves each change of a task together with the event that caused it, so a
    backend can keep both in one transaction; it stages them (`stage`, `stage_records`) so
    that a long stream need not wait for one commit per event. Both come down to
    `stage_span`, the one a backend that saves several events at once implements. Sequence
    numbers double as versions: saving at `seq` requires the stored task to be at `seq - 1`
    (absent when `seq` is 1), else `StaleTaskError` — two writers never silently overwrite
    each other. Tasks a store returns are owned by the runtime: callers that want to change
    one copy it first.

    Every task has an owner (`Principal.owner` of the caller that created it), saved with
    the task and never changed. Reads that take `owner` answer only that owner's tasks, as if
    the others did not exist; `owner=None` reads every task (the runtime's own bookkeeping).
    """

    _last_staged: Future[None] | None = None

    @abstractmethod
    async def get(self, task_id: str, owner: str | None = None) -> StoredTask | None:
        """The task with `task_id` (of `owner`, when given), or None when there is none."""

    @abstractmethod
    async def save(
        self,
        task: Task,
        seq: int,
        record: EventRecord | None = None,
        *,
        owner: str = ANONYMOUS_OWNER,
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
    ) -> None:
        """Create or update `task` as of event `seq`, appending `record` to its event log and
        the webhook deliveries it causes to the outbox, all or nothing; a new task (`seq` 1)
        belongs to `owner`, which later saves leave as it is.

        Raises StaleTaskError when the stored task is not at `seq - 1`, LostTaskError when it
        is not at `epoch` or has ended.
        """

    @abstractmethod
    async def context_owner(self, context_id: str) -> str | None:
        """The owner of the tasks in context `context_id`, or None when it has none."""

    @abstractmethod
    async def events_after(
        self, task_id: str, seq: int, limit: int | None = None
    ) -> list[EventRecord]:
        """The logged events of a task with a sequence number above `seq`, in order (the
        first `limit` of them, when given)."""

    @abstractmethod
    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        """Tasks matching `query` (of `query.owner`, when set), most recently updated first,
        one page at a time."""

    def stage(
        self,
        task: Task,
        seq: int,
        record: EventRecord | None = None,
        *,
        owner: str = ANONYMOUS_OWNER,
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
    ) -> Future[None]:
        """Start saving `task` as of event `seq` (as `save` does); the future completes once
        it is saved, or fails with what `save` would raise (see `stage_span`)."""
        records = [record] if record is not None else []
        return self.stage_span(task, seq - 1, seq, records, owner=owner, outbox=outbox, epoch=epoch)

    def stage_records(
        self,
        task: Task,
        records: Sequence[EventRecord],
        *,
        owner: str = ANONYMOUS_OWNER,
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
        task_json: bytes | None = None,
    ) -> Future[None]:
        """Start saving `task` as of the last of `records`, events that follow one another from
        the stored version (`records[0].seq - 1`), with the deliveries they cause (see
        `stage_span`)."""
        first, last = records[0].seq, records[-1].seq
        return self.stage_span(
            task,
            first - 1,
            last,
            records,
            owner=owner,
            outbox=outbox,
            epoch=epoch,
            task_json=task_json,
        )

    def stage_span(
        self,
        task: Task,
        previous: int,
        seq: int,
        records: Sequence[EventRecord],
        *,
        owner: str,
        outbox: Sequence[Delivery],
        epoch: int,
        task_json: bytes | None = None,
    ) -> Future[None]:
        """Start saving `task` from version `previous` to `seq`, with `records` (the events in
        between, none or all of them) and the deliveries they cause: as one save where the
        backend can, all of it or nothing. The future completes once it is saved, or fails
        with what `save` would raise. `task_json`, when given, is `task.to_json()`, made
        already by the caller: a backend that stores the task's JSON need not make it again.

        What is saved is taken from `task` before this returns, so the caller may go on
        changing it; the saves a caller stages are committed in the order it staged them (one
        after a save that failed fails as stale). The default saves a deep copy with `save`,
        a record at a time, once every save staged before it is done: a backend that only
        implements `save` is all or nothing per record.
        """
        copy = task.model_copy(deep=True)
        if not records:
            return self._save_in_turn(copy, seq, None, owner, outbox, epoch)
        *earlier, last = records
        for record in earlier:
            # A failed save fails every later one, the last included: its error is reported there.
            saved = self._save_in_turn(copy, record.seq, record, owner, (), epoch)
            saved.add_done_callback(mark_seen)
        return self._save_in_turn(copy, last.seq, last, owner, outbox, epoch)

    def _save_in_turn(
        self,
        task: Task,
        seq: int,
        record: EventRecord | None,
        owner: str,
        outbox: Sequence[Delivery],
        epoch: int,
    ) -> Future[None]:
        return self._in_turn(
            lambda: self.save(task, seq, record, owner=owner, outbox=outbox, epoch=epoch)
        )

    def _in_turn(self, write: Callable[[], Awaitable[None]]) -> Future[None]:
        """`write` once every write staged before it is done."""
        previous = self._last_staged

        async def in_turn() -> None:
            if previous is not None:
                await asyncio.wait([previous])
            await write()

        self._last_staged = asyncio.ensure_future(in_turn())
        return self._last_staged
