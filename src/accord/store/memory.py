"""In-memory TaskStore: for tests and throwaway servers; everything is lost on exit."""

from __future__ import annotations

from datetime import UTC, datetime

from accord.runtime.push import PushTarget
from accord.runtime.records import EventRecord
from accord.store.base import Orphan, StaleTaskError, StoredTask, TaskStore
from accord.store.query import RUNNING_STATES, Cursor, TaskPage, TaskQuery, status_time
from accord.store.retention import CleanupReport, Retention
from accord.types import Task


class InMemoryTaskStore(TaskStore):
    """Keeps tasks, event logs and push configs in dictionaries."""

    def __init__(self, retention: Retention | None = None) -> None:
        self.retention = retention if retention is not None else Retention()
        self._tasks: dict[str, StoredTask] = {}
        self._finished_at: dict[str, datetime] = {}
        self._events: dict[str, list[tuple[datetime, EventRecord]]] = {}
        self._push: dict[str, dict[str, PushTarget]] = {}
        self._runners: dict[str, str] = {}
        self._alive_until: dict[str, datetime] = {}

    async def get(self, task_id: str) -> StoredTask | None:
        return self._tasks.get(task_id)

    async def save(self, task: Task, seq: int, record: EventRecord | None = None) -> None:
        stored = self._tasks.get(task.id)
        if (stored.seq if stored else 0) != seq - 1:
            raise StaleTaskError(
                f"task {task.id} is at event {stored.seq if stored else 0}, not {seq - 1}"
            )
        now = datetime.now(UTC)
        self._tasks[task.id] = StoredTask(task, seq)
        if task.status.state.is_terminal:
            self._finished_at[task.id] = now
        if record is not None:
            log = self._events.setdefault(task.id, [])
            log.append((now, record))
            bound = self.retention.max_events_per_task
            if bound is not None and len(log) > bound:
                del log[:-bound]

    async def events_after(self, task_id: str, seq: int) -> list[EventRecord]:
        return [r for _, r in self._events.get(task_id, ()) if r.seq > seq]

    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        matching = [
            (Cursor(status_time(s.task), s.task.id), s.task)
            for s in self._tasks.values()
            if (query.context_id is None or s.task.context_id == query.context_id)
            and (query.state is None or s.task.status.state is query.state)
            and (query.updated_after is None or status_time(s.task) >= query.updated_after)
        ]
        matching.sort(key=lambda item: item[0], reverse=True)
        start = 0
        if query.page_token:
            after = Cursor.decode(query.page_token)
            start = next((i for i, (c, _) in enumerate(matching) if c < after), len(matching))
        page = matching[start : start + query.page_size]
        more = start + query.page_size < len(matching)
        return TaskPage(
            tasks=[task for _, task in page],
            next_page_token=page[-1][0].encode() if more else "",
            page_size=query.page_size,
            total_size=len(matching),
        )

    async def set_push_config(self, task_id: str, target: PushTarget) -> PushTarget:
        target = target.identified()
        assert target.config.id is not None
        self._push.setdefault(task_id, {})[target.config.id] = target
        return target

    async def get_push_config(self, task_id: str, config_id: str) -> PushTarget | None:
        return self._push.get(task_id, {}).get(config_id)

    async def list_push_configs(self, task_id: str) -> list[PushTarget]:
        return list(self._push.get(task_id, {}).values())

    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        return self._push.get(task_id, {}).pop(config_id, None) is not None

    async def heartbeat(self, replica_id: str, expires_at: datetime) -> None:
        self._alive_until[replica_id] = expires_at

    async def claim(self, task_id: str, replica_id: str) -> None:
        self._runners[task_id] = replica_id

    async def orphans(self, now: datetime) -> list[Orphan]:
        return [
            Orphan(stored, self._runners.get(task_id))
            for task_id, stored in self._tasks.items()
            if stored.task.status.state in RUNNING_STATES
            and not self._alive(self._runners.get(task_id), now)
        ]

    async def take_over(self, task_id: str, dead_runner: str | None, replica_id: str) -> bool:
        if self._runners.get(task_id) != dead_runner:
            return False
        self._runners[task_id] = replica_id
        return True

    def _alive(self, replica_id: str | None, now: datetime) -> bool:
        until = self._alive_until.get(replica_id) if replica_id else None
        return until is not None and until > now

    async def cleanup(self, now: datetime | None = None) -> CleanupReport:
        now = now if now is not None else datetime.now(UTC)
        tasks = events = 0
        if self.retention.finished_task_ttl is not None:
            cutoff = now - self.retention.finished_task_ttl
            for task_id in [t for t, at in self._finished_at.items() if at < cutoff]:
                del self._tasks[task_id], self._finished_at[task_id]
                events += len(self._events.pop(task_id, ()))
                self._push.pop(task_id, None)
                self._runners.pop(task_id, None)
                tasks += 1
        if self.retention.event_ttl is not None:
            cutoff = now - self.retention.event_ttl
            for log in self._events.values():
                kept = [entry for entry in log if entry[0] >= cutoff]
                events += len(log) - len(kept)
                log[:] = kept
        return CleanupReport(tasks=tasks, events=events)

    def __len__(self) -> int:
        return len(self._tasks)
