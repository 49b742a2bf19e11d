"""In-memory TaskStore: for tests and throwaway servers; everything is lost on exit."""

from __future__ import annotations

from accord.runtime.records import EventRecord
from accord.store.base import StaleTaskError, StoredTask, TaskStore
from accord.store.query import Cursor, TaskPage, TaskQuery, status_time
from accord.types import PushNotificationConfig, Task, new_id


class InMemoryTaskStore(TaskStore):
    """Keeps tasks, event logs and push configs in dictionaries."""

    def __init__(self) -> None:
        self._tasks: dict[str, StoredTask] = {}
        self._events: dict[str, list[EventRecord]] = {}
        self._push: dict[str, dict[str, PushNotificationConfig]] = {}

    async def get(self, task_id: str) -> StoredTask | None:
        return self._tasks.get(task_id)

    async def save(self, task: Task, seq: int, record: EventRecord | None = None) -> None:
        stored = self._tasks.get(task.id)
        if (stored.seq if stored else 0) != seq - 1:
            raise StaleTaskError(
                f"task {task.id} is at event {stored.seq if stored else 0}, not {seq - 1}"
            )
        self._tasks[task.id] = StoredTask(task, seq)
        if record is not None:
            self._events.setdefault(task.id, []).append(record)

    async def events_after(self, task_id: str, seq: int) -> list[EventRecord]:
        return [r for r in self._events.get(task_id, ()) if r.seq > seq]

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

    async def set_push_config(
        self, task_id: str, config: PushNotificationConfig
    ) -> PushNotificationConfig:
        if config.id is None:
            config = config.model_copy(update={"id": new_id()})
        assert config.id is not None
        self._push.setdefault(task_id, {})[config.id] = config
        return config

    async def get_push_config(self, task_id: str, config_id: str) -> PushNotificationConfig | None:
        return self._push.get(task_id, {}).get(config_id)

    async def list_push_configs(self, task_id: str) -> list[PushNotificationConfig]:
        return list(self._push.get(task_id, {}).values())

    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        return self._push.get(task_id, {}).pop(config_id, None) is not None

    def __len__(self) -> int:
        return len(self._tasks)
