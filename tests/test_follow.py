"""Follower: a task as it stands (the live run's, else the store's), and followed from its log."""

from __future__ import annotations

import pytest

from accord.core.records import EventRecord
from accord.errors import TaskNotFound, UnsupportedOperation
from accord.runtime.bus import InProcessEventBus
from accord.runtime.follow import CATCH_UP, Follower
from accord.runtime.runs import Runs
from accord.store import InMemoryTaskStore
from accord.types import TaskState
from runtime_parts import new_run, task_in
from test_store_conformance import moved


async def test_the_live_runs_task_stands_ahead_of_what_is_saved() -> None:
    store, runs = InMemoryTaskStore(), Runs()
    follower = Follower(store, InProcessEventBus(), runs)
    task = task_in(TaskState.WORKING)
    await store.save(task.model_copy(deep=True), 1, owner="apiKey:alice")
    run = new_run(moved(task, TaskState.INPUT_REQUIRED), owner="apiKey:alice", seq=2)
    runs.add(run)
    current, seq = await follower.current(task.id, "apiKey:alice")
    assert (current.status.state, seq) == (TaskState.INPUT_REQUIRED, 2)
    stored = await follower.stored(task.id, "apiKey:alice")
    assert (stored.task.status.state, stored.seq) == (TaskState.WORKING, 1)
    with pytest.raises(TaskNotFound):
        await follower.stored(task.id, "apiKey:bob")
    with pytest.raises(TaskNotFound):
        await follower.current(task.id, "apiKey:bob")


async def test_a_reader_behind_reads_the_log_a_page_at_a_time_to_the_end() -> None:
    store = InMemoryTaskStore()
    follower = Follower(store, InProcessEventBus(), Runs())
    task = task_in(TaskState.WORKING)
    last = CATCH_UP * 2 + 3
    for seq in range(1, last):
        await store.save(task, seq, EventRecord.of(task.id, seq, task, final=False))
    done = moved(task, TaskState.COMPLETED)
    await store.save(done, last, EventRecord.of(task.id, last, done, final=True))
    seen = [record.seq async for record in follower.watch(task.id, after_seq=0)]
    assert seen == list(range(1, last + 1))
    with pytest.raises(UnsupportedOperation, match="nothing to follow"):
        await anext(follower.watch(task.id))


class TrimmedWhileRead(InMemoryTaskStore):
    """A store whose log loses the events after the first page a reader reads, as a log's
    bound drops them while an agent far ahead goes on."""

    def __init__(self) -> None:
        super().__init__()
        self.pages = 0

    async def events_after(
        self, task_id: str, seq: int, limit: int | None = None
    ) -> list[EventRecord]:
        self.pages += 1
        if self.pages == 2:  # the second page: the next CATCH_UP events are gone
            seq += CATCH_UP
        return await super().events_after(task_id, seq, limit)


async def test_a_log_trimmed_between_pages_gives_the_task_for_what_it_dropped() -> None:
    store = TrimmedWhileRead()
    follower = Follower(store, InProcessEventBus(), Runs())
    task = task_in(TaskState.WORKING)
    last = CATCH_UP * 3
    for seq in range(1, last):
        await store.save(task, seq, EventRecord.of(task.id, seq, task, final=False))
    done = moved(task, TaskState.COMPLETED)
    await store.save(done, last, EventRecord.of(task.id, last, done, final=True))

    seen = [record async for record in follower.watch(task.id, after_seq=0)]

    assert [record.seq for record in seen] == [*range(1, CATCH_UP + 1), last]
    assert seen[-1].final and b'"completed"' in seen[-1].payload  # the task as it ended
