"""The memory store keeps finished tasks and logged events as JSON, not as live models."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from accord.core.deliveries import Delivery
from accord.core.records import EventRecord
from accord.store import InMemoryTaskStore, TaskQuery, TaskStore
from accord.types import Artifact, Task, TaskState, TaskStatus, TextPart, new_id
from test_store_conformance import make_task, moved


def finished(context_id: str = "ctx") -> Task:
    task = moved(make_task(context_id=context_id), TaskState.COMPLETED)
    task.artifacts = [Artifact(artifact_id=new_id(), parts=[TextPart(text="done")])]
    return task


async def test_a_finished_task_is_kept_as_saved_whatever_happens_to_the_object() -> None:
    store = InMemoryTaskStore()
    task = finished()
    await store.save(task, 1, EventRecord.of(task.id, 1, task, final=True))
    task.status = TaskStatus(state=TaskState.FAILED)
    task.artifacts = None
    stored = await store.get(task.id)
    assert stored is not None and stored.seq == 1
    assert stored.task.status.state is TaskState.COMPLETED
    assert stored.task.artifacts is not None and stored.task.artifacts[0].parts[0].text == "done"


async def test_finished_tasks_and_their_events_give_the_collector_almost_nothing_to_walk() -> None:
    store = InMemoryTaskStore()
    count = 300
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(count):
        task = finished()
        for seq in (1, 2, 3):  # working, then finished: a finished task takes no more saves
            version = task if seq == 3 else make_task(task.id)
            await store.save(version, seq, EventRecord.of(task.id, seq, version, final=seq == 3))
    del task
    gc.collect(0)
    # As live models each task and its three events would be dozens of tracked objects, and
    # a list of its events one more, which every later collection would walk; the first
    # young collection leaves nothing (a tuple holding tuples would stay tracked till the next).
    assert (len(gc.get_objects()) - before) / count < 0.5


async def test_finished_tasks_are_listed_and_filtered_like_running_ones() -> None:
    store = InMemoryTaskStore()
    done, running = finished("a"), make_task(context_id="a")
    other = finished("b")
    for task in (done, running, other):
        await store.save(task, 1)
    listed = await store.list_tasks(TaskQuery(context_id="a"))
    assert {task.id for task in listed.tasks} == {done.id, running.id}
    completed = await store.list_tasks(TaskQuery(state=TaskState.COMPLETED))
    assert {task.id for task in completed.tasks} == {done.id, other.id}
    assert completed.tasks[0].artifacts is not None


async def test_a_cleanup_of_many_tasks_lets_other_work_run_while_it_goes() -> None:
    store = InMemoryTaskStore()
    for _ in range(2500):  # more than two steps' worth of the sweeps
        task = finished()
        await store.save(task, 1, EventRecord.of(task.id, 1, task, final=True))
    turns = 0

    async def other_work() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    other = asyncio.create_task(other_work())
    await asyncio.sleep(0)
    started = turns
    report = await store.cleanup(datetime.now(UTC) + timedelta(days=8))
    other.cancel()
    assert report.tasks == 2500 and len(store) == 0
    assert turns - started >= 2  # once per step of the finished tasks' sweep at least


class SlowSaves(InMemoryTaskStore):
    """A store with only `save` of its own (stages as TaskStore does), each save slower than
    the one after it."""

    stage_span = TaskStore.stage_span

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[tuple[int, str]] = []

    async def save(
        self,
        task: Task,
        seq: int,
        record: EventRecord | None = None,
        *,
        owner: str = "",
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
    ) -> None:
        await asyncio.sleep(0.001 * (5 - seq))
        self.saved.append((seq, task.status.state.value))
        await super().save(task, seq, record, owner=owner, outbox=outbox, epoch=epoch)


async def test_a_store_with_only_save_commits_staged_saves_in_order_as_staged() -> None:
    store = SlowSaves()
    task = make_task()
    staged = []
    for seq, state in enumerate((TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED), 1):
        task.status = TaskStatus(state=state)
        staged.append(store.stage(task, seq))
    task.status = TaskStatus(state=TaskState.FAILED)  # after staging: saved copies don't change

    await asyncio.gather(*staged)

    assert store.saved == [(1, "submitted"), (2, "working"), (3, "completed")]
    stored = await store.get(task.id)
    assert stored is not None and stored.task.status.state is TaskState.COMPLETED
