"""TaskStore: where tasks and their event log live, whatever the backend."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from accord.runtime.records import EventRecord
from accord.types import Task


@dataclass(slots=True, frozen=True)
class StoredTask:
    """A task as last saved, with the sequence number of the last event applied to it."""

    task: Task
    seq: int


class TaskStore(ABC):
    """Persistence of tasks and their events.

    The runtime is the only writer of a task and saves each change together with the event
    that caused it, so a backend can keep both in one transaction. Tasks a store returns
    are owned by the runtime: callers that want to change one copy it first.
    """

    @abstractmethod
    async def get(self, task_id: str) -> StoredTask | None:
        """The task with `task_id`, or None when there is none."""

    @abstractmethod
    async def save(self, task: Task, seq: int, record: EventRecord | None = None) -> None:
        """Create or update `task` as of event `seq`, appending `record` to its event log."""

    @abstractmethod
    async def events_after(self, task_id: str, seq: int) -> list[EventRecord]:
        """The logged events of a task with a sequence number above `seq`, in order."""

    async def close(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Release connections; the default has nothing to release."""
