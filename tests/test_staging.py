"""Staging: a turn's records are one save, published once saved; a refused save loses the run."""

from __future__ import annotations

import asyncio
from asyncio import Future
from collections.abc import Sequence

import pytest

from accord.core.deliveries import Delivery
from accord.core.records import EventRecord
from accord.runtime.bus import InProcessEventBus
from accord.runtime.runs import Run
from accord.runtime.staging import EVENTS_PER_SAVE, Staging
from accord.runtime.state_machine import apply_event, new_task
from accord.store import InMemoryTaskStore, LostTaskError
from accord.types import Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from runtime_parts import new_run


class Saves(InMemoryTaskStore):
    """Notes the events of each save staged."""

    def __init__(self) -> None:
        super().__init__()
        self.saves: list[list[int]] = []

    def stage_records(
        self,
        task: Task,
        records: Sequence[EventRecord],
        *,
        owner: str = "",
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
        task_json: bytes | None = None,
    ) -> Future[None]:
        self.saves.append([record.seq for record in records])
        return super().stage_records(
            task, records, owner=owner, outbox=outbox, epoch=epoch, task_json=task_json
        )


def status(run: Run, state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=run.task_id,
        context_id=run.context.context_id,
        status=TaskStatus(state=state),
        final=state is TaskState.COMPLETED,
    )


async def record(staging: Staging, run: Run, state: TaskState) -> None:
    assert run.task is not None
    change = apply_event(run.task, status(run, state))
    await staging.record(run, change, final=state is TaskState.COMPLETED)


def started(staging: Staging) -> Run:
    run = new_run()
    run.task = new_task(run.task_id, run.context.context_id, run.context.message)
    staging.claim_new(run)
    return run


async def test_a_turns_records_are_one_save_and_each_is_published_after_it() -> None:
    store, bus = Saves(), InProcessEventBus()
    staging = Staging(store, bus, "r1", None, on_lost=lambda run, reason: None)
    run = started(staging)
    subscription = bus.subscribe(run.task_id)
    assert run.task is not None
    await staging.record(run, run.task, final=False)
    await record(staging, run, TaskState.WORKING)
    await record(staging, run, TaskState.COMPLETED)
    assert store.saves == [[1, 2, 3]]
    assert run.reached_final
    published = [(await anext(subscription)).seq for _ in range(3)]
    assert published == [1, 2, 3]
    stored = await store.get(run.task_id)
    assert stored is not None and stored.seq == 3
    subscription.close()


async def test_a_long_burst_is_saved_a_full_save_at_a_time_and_flushed_on_demand() -> None:
    store = Saves()
    staging = Staging(store, InProcessEventBus(), "r1", None, on_lost=lambda run, reason: None)
    run = started(staging)
    assert run.task is not None
    await staging.record(run, run.task, final=False)
    for _ in range(EVENTS_PER_SAVE):
        await record(staging, run, TaskState.WORKING)
    assert [len(save) for save in store.saves] == [EVENTS_PER_SAVE]
    await staging.flush([run])  # the rest, staged without waiting for the turn to end
    assert [len(save) for save in store.saves] == [EVENTS_PER_SAVE, 1]
    stored = await store.get(run.task_id)
    assert stored is not None and stored.seq == EVENTS_PER_SAVE + 1


async def test_a_save_refused_as_another_replicas_loses_the_run_once() -> None:
    store = InMemoryTaskStore()
    lost: list[tuple[Run, str]] = []
    staging = Staging(store, InProcessEventBus(), "r1", None, on_lost=lambda *it: lost.append(it))
    run = started(staging)
    assert run.task is not None
    await staging.record(run, run.task, final=False)
    await staging.flush([run])
    assert await store.claim(run.task_id, "r2") is not None  # a new epoch: r1's is over
    await record(staging, run, TaskState.WORKING)
    await staging.flush([run])
    await asyncio.sleep(0)
    assert run.lost and run.seq == 1
    assert [(who, "epoch" in reason) for who, reason in lost] == [(run, True)]
    with pytest.raises(LostTaskError):
        await record(staging, run, TaskState.COMPLETED)
    assert len(lost) == 1
