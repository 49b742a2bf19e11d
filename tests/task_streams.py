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
        record = self._apply(event)
        await self.store.save(self.task, record.seq, record)

    async def together(
        self, *events: Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
    ) -> list[EventRecord]:
        """Apply `events` and save them as one save, as the runtime saves the events of a turn."""
        records = [self._apply(event) for event in events]
        await self.store.stage_records(self.task, records)
        return records

    def _apply(self, event: Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent) -> EventRecord:
        change = apply_event(self.task, event) if self.seq else self.task
        final = isinstance(change, TaskStatusUpdateEvent) and change.final
        self.seq += 1
        return EventRecord.of(self.task.id, self.seq, change, final=final)

    async def start(self) -> None:
        await self.emit(self.task)
        await self.status(TaskState.WORKING)

    async def status(self, state: TaskState) -> None:
        await self.emit(self.status_event(state))

    def status_event(self, state: TaskState) -> TaskStatusUpdateEvent:
        status = TaskStatus(state=state, timestamp="2024-05-01T12:00:00.000Z")
        return TaskStatusUpdateEvent(
            task_id=self.task.id,
            context_id=self.task.context_id,
            status=status,
            final=state.is_terminal,
        )

    def chunk_event(
        self, artifact_id: str, text: str, *, append: bool = True, **meta: Any
    ) -> TaskArtifactUpdateEvent:
        artifact = Artifact(
            artifact_id=artifact_id, parts=[TextPart(text=text)], metadata=meta or None
        )
        return TaskArtifactUpdateEvent(
            task_id=self.task.id,
            context_id=self.task.context_id,
            artifact=artifact,
            append=append or None,
        )

    async def chunk(self, artifact_id: str, text: str, *, append: bool = True, **meta: Any) -> None:
        await self.emit(self.chunk_event(artifact_id, text, append=append, **meta))

    async def chunks(self, count: int, size: int = 8, artifact_id: str = "answer") -> None:
        for n in range(count):
            await self.chunk(artifact_id, f"{n:0{size}d}"[-size:])

    async def chunks_together(self, count: int, artifact_id: str = "answer") -> None:
        """`count` chunks saved as one save."""
        await self.together(*(self.chunk_event(artifact_id, f"{n:08d}") for n in range(count)))

    async def read_back(self, store: TaskStore | None = None) -> None:
        """Assert `store` (default: the one saved to) gives the task back exactly as held."""
        stored = await (store or self.store).get(self.task.id)
        assert stored is not None
        assert (stored.seq, stored.task.to_json()) == (self.seq, self.task.to_json())
        page = await (store or self.store).list_tasks(TaskQuery(context_id=self.task.context_id))
        [listed] = [task for task in page.tasks if task.id == self.task.id]
        assert listed.to_json() == self.task.to_json()
