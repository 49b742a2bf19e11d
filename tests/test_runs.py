"""Runs: at most one run per task on a replica, each seen only by its task's owner."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from accord.errors import TaskNotFound
from accord.runtime.bus import InProcessEventBus
from accord.runtime.runs import Runs
from accord.types import TaskState
from runtime_parts import new_run, task_in


def test_a_task_has_one_run_at_most_and_a_run_leaves_only_itself() -> None:
    runs = Runs()
    first = new_run(task_in(TaskState.WORKING))
    second = new_run(first.task)
    assert runs.add(first)
    assert not runs.add(second)
    runs.discard(second)  # not its task's run: nothing happens
    assert runs.get(first.task_id) is first and first.task_id in runs
    runs.replace(second)
    runs.discard(first)
    assert runs.get(first.task_id) is second
    runs.discard(second)
    assert first.task_id not in runs and list(runs) == []


def test_a_live_run_is_its_owners_and_holds_a_task_it_has_not_lost() -> None:
    runs = Runs()
    run = new_run(task_in(TaskState.WORKING), owner="apiKey:alice")
    runs.add(run)
    assert runs.live(run.task_id, "apiKey:alice") is run
    assert runs.live(run.task_id, None) is run
    with pytest.raises(TaskNotFound):
        runs.live(run.task_id, "apiKey:bob")
    run.lost = True
    assert runs.live(run.task_id, "apiKey:alice") is None
    taskless = new_run()
    runs.add(taskless)
    assert runs.live(taskless.task_id, None) is None


async def test_working_runs_are_counted_by_the_owner_of_their_message() -> None:
    runs = Runs()
    going, done = new_run(task_in(TaskState.WORKING)), new_run(task_in(TaskState.WORKING))
    never = asyncio.Event()
    going.worker = asyncio.create_task(never.wait())
    done.worker = asyncio.create_task(asyncio.sleep(0))
    await done.worker
    runs.add(going)
    runs.add(done)
    assert going.working and not done.working
    assert runs.working_for(going.context.principal.owner) == 1
    going.lost = True
    assert not going.working
    going.worker.cancel()


class RecordingBus(InProcessEventBus):
    """Says which tasks it is told run here."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[str] = []

    @contextmanager
    def running(self, task_id: str) -> Iterator[None]:
        self.held.append(task_id)
        try:
            yield
        finally:
            self.held.remove(task_id)


def test_the_bus_knows_a_task_runs_here_while_it_has_a_run_whichever_run_that_is() -> None:
    bus = RecordingBus()
    runs = Runs(bus)
    first = new_run(task_in(TaskState.WORKING))
    second = new_run(first.task)
    runs.add(first)
    runs.replace(second)  # the task still runs here: held once
    assert bus.held == [first.task_id]
    runs.discard(first)  # not its task's run any more: nothing changes
    assert bus.held == [first.task_id]
    runs.discard(second)
    assert bus.held == []
