"""TaskStore: where tasks and their event log live, whatever the backend."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from accord.runtime.records import EventRecord
from accord.store.query import TaskPage, TaskQuery
from accord.types import PushNotificationConfig, Task


class StaleTaskError(RuntimeError):
    """A save raced with another writer: the stored task moved on since it was read."""


@dataclass(slots=True, frozen=True)
class StoredTask:
    """A task as last saved, with the sequence number of the last event applied to it."""

    task: Task
    seq: int


class TaskStore(ABC):
    """Persistence of tasks, their event logs and their push notification configs.

    The runtime saves each change of a task together with the event that caused it, so a
    backend can keep both in one transaction. Sequence numbers double as versions: saving
    at `seq` requires the stored task to be at `seq - 1` (absent when `seq` is 1), else
    `StaleTaskError` — two writers never silently overwrite each other. Tasks a store
    returns are owned by the runtime: callers that want to change one copy it first.
    """

    @abstractmethod
    async def get(self, task_id: str) -> StoredTask | None:
        """The task with `task_id`, or None when there is none."""

    @abstractmethod
    async def save(self, task: Task, seq: int, record: EventRecord | None = None) -> None:
        """Create or update `task` as of event `seq`, appending `record` to its event log.

        Raises StaleTaskError when the stored task is not at `seq - 1`.
        """

    @abstractmethod
    async def events_after(self, task_id: str, seq: int) -> list[EventRecord]:
        """The logged events of a task with a sequence number above `seq`, in order."""

    @abstractmethod
    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        """Tasks matching `query`, most recently updated first, one page at a time."""

    @abstractmethod
    async def set_push_config(
        self, task_id: str, config: PushNotificationConfig
    ) -> PushNotificationConfig:
        """Add or replace (by id) a push config of a task; a config without id gets one."""

    @abstractmethod
    async def get_push_config(self, task_id: str, config_id: str) -> PushNotificationConfig | None:
        """One push config of a task, or None."""

    @abstractmethod
    async def list_push_configs(self, task_id: str) -> list[PushNotificationConfig]:
        """All push configs of a task, in the order they were first set."""

    @abstractmethod
    async def delete_push_config(self, task_id: str, config_id: str) -> bool:
        """Remove one push config of a task; False when there was none."""

    async def close(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Release connections; the default has nothing to release."""
