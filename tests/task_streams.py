"""A task streamed into a store event by event, as the runtime saves it, for store tests."""

from __future__ import annotations

from typing import Any

from accord.core.records import EventRecord
from accord.runtime.state_machine import apply_event
from accord.store import TaskQuery, TaskStore
from accord.types import (
    Artifact,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)


class Stream:
    """A task's events applied and saved one by one, as the runtime does: the task it holds is
    what a store must give back."""

    def __init__(self, store: TaskStore, task: Task, seq: int = 0) -> None:
        self.store = store
        self.task = task
        self.seq = seq  # of the last event saved

    async def emit(self, event: Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent) -> None:
        change = apply_event(self.task, event) if self.seq else self.task
        final = isinstance(change, TaskStatusUpdateEvent) and change.final
        self.seq += 1
        await self.store.save(
            self.task, self.seq, EventRecord.of(self.task.id, self.seq, change, final=final)
        )

    async def start(self) -> None:
        await self.emit(self.task)
        await self.status(TaskState.WORKING)

    async def status(self, state: TaskState) -> None:
        status = TaskStatus(state=state, timestamp="2024-05-01T12:00:00.000Z")
        final = state.is_terminal
        update = TaskStatusUpdateEvent(
            task_id=self.task.id, context_id=self.task.context_id, status=status, final=final
        )
        await self.emit(update)

    async def chunk(self, artifact_id: str, text: str, *, append: bool = True, **meta: Any) -> None:
        artifact = Artifact(
            artifact_id=artifact_id, parts=[TextPart(text=text)], metadata=meta or None
        )
        event = TaskArtifactUpdateEvent(
            task_id=self.task.id,
            context_id=self.task.context_id,
            artifact=artifact,
            append=append or None,
        )
        await self.emit(event)

    async def chunks(self, count: int, size: int = 8, artifact_id: str = "answer") -> None:
        for n in range(count):
            await self.chunk(artifact_id, f"{n:0{size}d}"[-size:])

    async def read_back(self, store: TaskStore | None = None) -> None:
        """Assert `store` (default: the one saved to) gives the task back exactly as held."""
        stored = await (store or self.store).get(self.task.id)
        assert stored is not None
        assert (stored.seq, stored.task.to_json()) == (self.seq, self.task.to_json())
        page = await (store or self.store).list_tasks(TaskQuery(context_id=self.task.context_id))
        [listed] = [task for task in page.tasks if task.id == self.task.id]
        assert listed.to_json() == self.task.to_json()
