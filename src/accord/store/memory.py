"""In-memory TaskStore: for tests and throwaway servers; everything is lost on exit."""

from __future__ import annotations

import asyncio
from asyncio import Future
from bisect import bisect_right
from collections import deque
from collections.abc import Sequence
from datetime import UTC, datetime

from accord.core.deliveries import Delivery
from accord.core.principal import ANONYMOUS_OWNER
from accord.core.push import PushTarget
from accord.core.query import RUNNING_STATES, Cursor, TaskPage, TaskQuery, status_time
from accord.core.records import EventRecord
from accord.store.base import LostTaskError, Orphan, StaleTaskError, StoredTask, TaskStore
from accord.store.memory_log import logged_micros, logged_seq, micros, packed, unpacked
from accord.store.memory_outbox import InMemoryOutbox
from accord.store.retention import CleanupReport, Retention
from accord.types import Task

# Finished tasks are kept as plain tuples of strings, bytes and numbers, logged events as
# bytes (`memory_log`), and a finished task's event log as a tuple of those: the garbage
# collector stops tracking such tuples at the first collection that sees them, where a task's
# models (or a list, or a tuple holding tuples) would add objects to later collections for as
# long as the store keeps the task. Finished tasks never change: their JSON is all to keep.
_Listing = tuple[str, str, datetime]
"""What listing filters and sorts a task by: its context, state and status time."""
_Finished = tuple[int, bytes, str, str, datetime, int]
"""A finished task: its seq, its JSON, then its _Listing, then its epoch."""
_Log = list[bytes] | tuple[bytes, ...]
"""A task's event log, in seq order: a list while the task runs, a tuple once it has ended."""


def _listing(task: Task) -> _Listing:
    return task.context_id, task.status.state.value, status_time(task)


def _finished(task: Task, seq: int, epoch: int, task_json: bytes | None) -> _Finished:
    return seq, task_json or task.to_json(), *_listing(task), epoch


_SWEEP_STEP = 1000
"""Entries a cleanup handles before it lets the event loop run other work."""


def _alive(alive_until: dict[str, datetime], replica_id: str | None, now: datetime) -> bool:
    until = alive_until.get(replica_id) if replica_id else None
    return until is not None and until > now


def _stored(entry: StoredTask | _Finished, owner: str) -> StoredTask:
    if isinstance(entry, StoredTask):
        return entry
    return StoredTask(Task.model_validate_json(entry[1]), entry[0], owner, entry[5])


class InMemoryTaskStore(InMemoryOutbox, TaskStore):
    """Keeps tasks, event logs, push configs and runners in dictionaries (finished tasks and
    logged events as their JSON), and the outbox as `InMemoryOutbox` does."""

    tracks_runners = True
    system = "memory"

    def __init__(self, retention: Retention | None = None) -> None:
        super().__init__()
        self.retention = retention if retention is not None else Retention()
        self._tasks: dict[str, StoredTask | _Finished] = {}
        # When each task ended and its id, in the order they ended: what cleanup forgets (in
        # two queues, as a tuple per task would be one more object for the next collection).
        self._ended_at: deque[datetime] = deque()
        self._ended: deque[str] = deque()
        self._events: dict[str, _Log] = {}
        # The ids of the tasks not ended, in the order they came: all that orphans() reads.
        self._running: dict[str, None] = {}
        self._push: dict[str, dict[str, PushTarget]] = {}
        # Owners other than the anonymous one, by task, and the owner of each context.
        self._owners: dict[str, str] = {}
        self._context_owners: dict[str, str] = {}
        self._context_tasks: dict[str, int] = {}  # its owner is forgotten with its last task
        self._runners: dict[str, str] = {}
        self._alive_until: dict[str, datetime] = {}

    async def get(self, task_id: str, owner: str | None = None) -> StoredTask | None:
        entry = self._tasks.get(task_id)
        if entry is None or not self._owned(task_id, owner):
            return None
        return _stored(entry, self._owner(task_id))

    def _owner(self, task_id: str) -> str:
        return self._owners.get(task_id, ANONYMOUS_OWNER)

    def _owned(self, task_id: str, owner: str | None) -> bool:
        return owner is None or self._owner(task_id) == owner

    async def context_owner(self, context_id: str) -> str | None:
        return self._context_owners.get(context_id)

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
        self._save(task, seq - 1, seq, [record] if record else [], owner, outbox, epoch, None)

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
        # Saved before this returns: the store keeps the caller's task itself, as `save` does.
        saved = asyncio.get_running_loop().create_future()
        try:
            self._save(task, previous, seq, records, owner, outbox, epoch, task_json)
        except StaleTaskError as error:
            saved.set_exception(error)
        else:
            saved.set_result(None)
        return saved

    def _save(
        self,
        task: Task,
        previous: int,
        seq: int,
        records: Sequence[EventRecord],
        owner: str,
        outbox: Sequence[Delivery],
        epoch: int,
        task_json: bytes | None,
    ) -> None:
        entry = self._tasks.get(task.id)
        if entry is not None and not isinstance(entry, StoredTask):
            raise LostTaskError(f"task {task.id} has ended: it takes no more writes")
        if entry is not None and entry.epoch != epoch:
            raise LostTaskError(f"task {task.id} is at epoch {entry.epoch}, not {epoch}")
        current = entry.seq if entry is not None else 0
        if current != previous:
            raise StaleTaskError(f"task {task.id} is at event {current}, not {previous}")
        if entry is None:
            if owner != ANONYMOUS_OWNER:
                self._owners[task.id] = owner
            self._context_owners.setdefault(task.context_id, owner)
            self._context_tasks[task.context_id] = self._context_tasks.get(task.context_id, 0) + 1
        else:
            owner = self._owner(task.id)
        now = datetime.now(UTC)
        ended = task.status.state.is_terminal
        if ended:
            self._tasks[task.id] = _finished(task, seq, epoch, task_json)
            self._running.pop(task.id, None)
            self._ended_at.append(now)
            self._ended.append(task.id)
        else:
            self._tasks[task.id] = StoredTask(task, seq, owner, epoch)
            self._running[task.id] = None
        if records or ended:
            running = self._events.get(task.id)  # a list: an ended task takes no writes
            log = running if isinstance(running, list) else []
            logged_at = micros(now)  # once a save: its records are logged together
            log += [packed(record, logged_at) for record in records]
            bound = self.retention.max_events_per_task
            if bound is not None and len(log) > bound:
                del log[:-bound]
            if log:
                self._events[task.id] = tuple(log) if ended else log
        self.keep_deliveries(outbox)

    async def events_after(
        self, task_id: str, seq: int, limit: int | None = None
    ) -> list[EventRecord]:
        log = self._events.get(task_id, ())
        start = bisect_right(log, seq, key=logged_seq)  # a log is in seq order
        end = None if limit is None else start + limit
        return [unpacked(task_id, logged) for logged in log[start:end]]

    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        matching: list[tuple[Cursor, StoredTask | _Finished]] = []
        for task_id, entry in self._tasks.items():
            if not self._owned(task_id, query.owner):
                continue
            context_id, state, updated = (
                _listing(entry.task) if isinstance(entry, StoredTask) else entry[2:5]
            )
            if (
                (query.context_id is None or context_id == query.context_id)
                and (query.state is None or state == query.state.value)
                and (query.updated_after is None or updated >= query.updated_after)
            ):
                matching.append((Cursor(updated, task_id), entry))
        matching.sort(key=lambda item: item[0], reverse=True)
        start = 0
        if query.page_token:
            after = Cursor.decode(query.page_token)
            start = next((i for i, (c, _) in enumerate(matching) if c < after), len(matching))
        page = matching[start : start + query.page_size]
        more = start + query.page_size < len(matching)
        return TaskPage(
            tasks=[_stored(entry, ANONYMOUS_OWNER).task for _, entry in page],
            next_page_token=page[-1][0].encode() if more else "",
            page_size=query.page_size,
            total_size=len(matching),
        )

    async def set_push_config(self, task_id: str, target: PushTarget) -> PushTarget:
        target = target.identified()
        assert target.config.id is not None
        self._push.setdefault(task_id, {})[target.config.id] = target
        return target

    async def get_push_config(
        self, task_id: str, config_id: str, owner: str | None = None
    ) -> PushTarget | None:
        return self._push_of(task_id, owner).get(config_id)

    async def list_push_configs(self, task_id: str, owner: str | None = None) -> list[PushTarget]:
        return list(self._push_of(task_id, owner).values())

    async def delete_push_config(
        self, task_id: str, config_id: str, owner: str | None = None
    ) -> bool:
        return self._push_of(task_id, owner).pop(config_id, None) is not None

    def _push_of(self, task_id: str, owner: str | None) -> dict[str, PushTarget]:
        """The push configs of a task, none when `owner` is given and does not own it."""
        if owner is not None and (task_id not in self._tasks or not self._owned(task_id, owner)):
            return {}
        return self._push.get(task_id, {})

    async def heartbeat(self, replica_id: str, expires_at: datetime) -> None:
        self._alive_until[replica_id] = expires_at

    async def record_runner(self, task_id: str, replica_id: str) -> None:
        self._runners[task_id] = replica_id

    async def claim(
        self, task_id: str, replica_id: str, *, at_seq: int | None = None
    ) -> StoredTask | None:
        entry = self._tasks.get(task_id)
        if not isinstance(entry, StoredTask) or at_seq not in (None, entry.seq):
            return None  # gone, finished (kept as JSON), or moved on
        return self._claimed(entry, replica_id)

    def _claimed(self, entry: StoredTask, replica_id: str) -> StoredTask:
        """The task under a new epoch, a copy of its own for the claimant (whose changes must
        not reach the task an earlier claimant is still holding)."""
        task = entry.task.model_copy(deep=True)
        claimed = StoredTask(task, entry.seq, entry.owner, entry.epoch + 1)
        self._tasks[task.id] = claimed
        self._runners[task.id] = replica_id
        return claimed

    def stage_claim(self, task_id: str, replica_id: str) -> Future[None]:
        self._runners[task_id] = replica_id
        claimed = asyncio.get_running_loop().create_future()
        claimed.set_result(None)
        return claimed

    async def orphans(self, now: datetime) -> list[Orphan]:
        return [
            Orphan(stored, self._runners.get(task_id))
            for task_id in self._running  # a finished task has no runner to lose
            if isinstance(stored := self._tasks[task_id], StoredTask)
            and stored.task.status.state in RUNNING_STATES
            and not _alive(self._alive_until, self._runners.get(task_id), now)
        ]

    async def take_over(
        self, task_id: str, dead_runner: str | None, replica_id: str
    ) -> StoredTask | None:
        entry = self._tasks.get(task_id)
        if self._runners.get(task_id) != dead_runner or not isinstance(entry, StoredTask):
            return None
        return self._claimed(entry, replica_id)

    async def cleanup(self, now: datetime | None = None) -> CleanupReport:
        now = now if now is not None else datetime.now(UTC)
        tasks = events = 0
        # Both sweeps let the event loop run other work every _SWEEP_STEP entries: a store
        # of a million tasks would otherwise stop the server for a second.
        if self.retention.finished_task_ttl is not None:
            cutoff = now - self.retention.finished_task_ttl
            # The oldest first: a clock set back only delays those that ended after it.
            while self._ended_at and self._ended_at[0] < cutoff:
                forgotten: set[str] = set()
                while self._ended_at and self._ended_at[0] < cutoff:
                    self._ended_at.popleft()
                    forgotten.add(task_id := self._ended.popleft())
                    events += self._forget(task_id)
                    if len(forgotten) == _SWEEP_STEP:
                        break
                self.forget_deliveries(forgotten)  # one pass over the outbox for the step
                tasks += len(forgotten)
                await asyncio.sleep(0)
        if self.retention.event_ttl is not None:
            logged_cutoff = micros(now - self.retention.event_ttl)
            for swept, task_id in enumerate(list(self._events), 1):
                log = self._events.get(task_id)
                if log and logged_micros(log[0]) < logged_cutoff:  # in the order logged
                    kept = [logged for logged in log if logged_micros(logged) >= logged_cutoff]
                    events += len(log) - len(kept)
                    self._events[task_id] = kept if isinstance(log, list) else tuple(kept)
                if swept % _SWEEP_STEP == 0:
                    await asyncio.sleep(0)
        return CleanupReport(tasks=tasks, events=events)

    def _forget(self, task_id: str) -> int:
        """Drop an ended task and all that goes with it but its deliveries; the number of its
        events."""
        entry = self._tasks.pop(task_id)
        context_id = entry.task.context_id if isinstance(entry, StoredTask) else entry[2]
        left = self._context_tasks.pop(context_id) - 1
        if left:
            self._context_tasks[context_id] = left
        else:
            del self._context_owners[context_id]
        self._push.pop(task_id, None)
        self._runners.pop(task_id, None)
        self._owners.pop(task_id, None)
        return len(self._events.pop(task_id, ()))

    def __len__(self) -> int:
        return len(self._tasks)
