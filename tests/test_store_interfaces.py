"""The store's interfaces, one per job, that every backend implements; saves staged one way."""

from __future__ import annotations

from asyncio import Future
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from accord.core.deliveries import Delivery
from accord.core.records import EventRecord
from accord.store import InMemoryTaskStore, StoreOfAnotherAgent, TaskStore
from accord.store.agent_binding import AgentBinding
from accord.store.outbox import DeliveryOutbox
from accord.store.push_configs import PushConfigStore
from accord.store.runners import RunnerRegistry
from accord.store.task_log import TaskLog
from accord.types import Task, TaskState
from stores import Backend, backend_fixture, store_fixture  # noqa: F401 - fixtures
from test_store_conformance import make_task, moved

INTERFACES = (TaskLog, PushConfigStore, DeliveryOutbox, RunnerRegistry, AgentBinding)


async def test_every_backend_implements_each_interface_and_tracks_runners(
    store: TaskStore,
) -> None:
    for interface in INTERFACES:
        assert isinstance(store, interface), interface.__name__
    assert store.tracks_runners


class Spans(InMemoryTaskStore):
    """Notes what each staged save spans: from which version to which, with which events."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[tuple[int, int, list[int], int]] = []

    def stage_span(
        self,
        task: Task,
        previous: int,
        seq: int,
        records: Sequence[EventRecord],
        *,
        owner: str,
        outbox: Sequence[Delivery],
        epoch: int,
        task_json: bytes | None = None,
    ) -> Future[None]:
        self.spans.append((previous, seq, [record.seq for record in records], len(outbox)))
        return super().stage_span(
            task,
            previous,
            seq,
            records,
            owner=owner,
            outbox=outbox,
            epoch=epoch,
            task_json=task_json,
        )


async def test_stage_and_stage_records_both_come_down_to_one_span() -> None:
    store = Spans()
    task = make_task()
    await store.stage(task, 1)
    working = moved(task, TaskState.WORKING)
    records = [EventRecord.of(task.id, seq, working, final=False) for seq in (2, 3, 4)]
    await store.stage_records(working, records)
    await store.stage(working, 5, EventRecord.of(task.id, 5, working, final=False))
    assert store.spans == [(0, 1, [], 0), (1, 4, [2, 3, 4], 0), (4, 5, [5], 0)]
    stored = await store.get(task.id)
    assert stored is not None and stored.seq == 5
    assert [record.seq for record in await store.events_after(task.id, 0)] == [2, 3, 4, 5]


class OnlySave(InMemoryTaskStore):
    """A store that stages as TaskLog does by default: through `save`, a record at a time."""

    stage_span = TaskLog.stage_span

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[int] = []

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
        self.saved.append(seq)
        await super().save(task, seq, record, owner=owner, outbox=outbox, epoch=epoch)


async def test_the_default_span_saves_each_record_on_its_own_from_a_copy() -> None:
    store = OnlySave()
    task = make_task()
    records = [EventRecord.of(task.id, seq, task, final=False) for seq in (1, 2, 3)]
    saved = store.stage_records(task, records)
    task.status.state = TaskState.FAILED  # after staging: not what is saved
    await saved
    assert store.saved == [1, 2, 3]
    stored = await store.get(task.id)
    assert stored is not None and stored.task.status.state is TaskState.SUBMITTED


async def test_a_registry_that_tracks_no_runners_says_so_on_every_call() -> None:
    registry = RunnerRegistry()
    assert not registry.tracks_runners
    with pytest.raises(NotImplementedError, match="does not track runners"):
        await registry.heartbeat("r1", datetime.now(UTC))
    with pytest.raises(NotImplementedError):
        await registry.claim("t1", "r1")
    with pytest.raises(NotImplementedError):
        registry.stage_claim("t1", "r1")


async def test_the_default_binding_keeps_the_first_agent_named() -> None:
    binding = AgentBinding()
    await binding.bind_agent("weather")
    await binding.bind_agent("weather")
    with pytest.raises(StoreOfAnotherAgent, match="'weather', not of 'travel'"):
        await binding.bind_agent("travel")
