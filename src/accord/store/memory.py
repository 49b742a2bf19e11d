"""In-memory TaskStore: for tests and throwaway servers; everything is lost on exit."""

from __future__ import annotations

from accord.runtime.records import EventRecord
from accord.store.base import StoredTask, TaskStore
from accord.types import Task


class InMemoryTaskStore(TaskStore):
    """Keeps tasks and their event logs in dictionaries."""

    def __init__(self) -> None:
        self._tasks: dict[str, StoredTask] = {}
        self._events: dict[str, list[EventRecord]] = {}

    async def get(self, task_id: str) -> StoredTask | None:
        return self._tasks.get(task_id)

    async def save(self, task: Task, seq: int, record: EventRecord | None = None) -> None:
        self._tasks[task.id] = StoredTask(task, seq)
        if record is not None:
            self._events.setdefault(task.id, []).append(record)

    async def events_after(self, task_id: str, seq: int) -> list[EventRecord]:
        return [r for r in self._events.get(task_id, ()) if r.seq > seq]

    def __len__(self) -> int:
        return len(self._tasks)
