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
