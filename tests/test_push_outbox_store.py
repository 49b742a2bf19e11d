"""The outbox of the TaskStore contract, on every backend: deliveries saved with their event,
claimed a queue head at a time under a lease, retried, parked and listed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, text

from accord.core.deliveries import Delivery
from accord.core.records import EventRecord
from accord.store import Retention, StaleTaskError, TaskStore
from accord.store.outbox import OutboxDepth
from accord.store.sql.migrations import UpgradeResult, head_version, upgrade
from accord.store.sql.rows import delivery_values
from accord.store.sql.schema import push_deliveries, schema_version
from accord.types import Task, TaskState, TaskStatus, new_id
from stores import Backend, backend_fixture, sql_backend_fixture, store_fixture  # noqa: F401
from test_sql_store import create_version_5, create_version_9

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
LEASE = timedelta(seconds=30)


def make_task(task_id: str, state: TaskState = TaskState.WORKING) -> Task:
    return Task(id=task_id, context_id="ctx", status=TaskStatus(state=state))


def delivery(task_id: str, seq: int, url: str = "https://hooks.example/a") -> Delivery:
    return Delivery(
        id=new_id(),
        task_id=task_id,
        seq=seq,
        url=url,
        queue=url,
        config=f'{{"url": "{url}"}}',
        body=f'{{"seq": {seq}}}'.encode(),
        media_type="application/json",
        issuer="https://agent.example",
        created_at=NOW,
        next_at=NOW,
        deadline=NOW + timedelta(hours=1),
    )


async def save(store: TaskStore, task: Task, seq: int, *deliveries: Delivery) -> None:
    record = EventRecord.of(task.id, seq, task, final=False)
    await store.save(task, seq, record, outbox=deliveries)


async def test_deliveries_are_saved_with_their_event_and_handed_out_head_first(
    store: TaskStore,
) -> None:
    task = make_task("t1")
    first_a, first_b = delivery("t1", 1), delivery("t1", 1, "https://hooks.example/b")
    second_a = delivery("t1", 2)
    await save(store, task, 1, first_a, first_b)
    await save(store, task, 2, second_a)
    claimed = await store.claim_deliveries(NOW, NOW + LEASE, 10)
    # One per queue: the second to /a waits for the first.
    assert {d.id for d in claimed} == {first_a.id, first_b.id}
    assert all(d.attempts == 1 and d.next_at == NOW + LEASE for d in claimed)
    got = next(d for d in claimed if d.id == first_a.id)
    assert (got.body, got.config, got.issuer, got.seq) == (
        first_a.body, first_a.config, first_a.issuer, 1,
    )  # fmt: skip
    assert await store.claim_deliveries(NOW, NOW + LEASE, 10) == []  # leased
    await store.delivered(first_a.id)
    assert [d.id for d in await store.claim_deliveries(NOW, NOW + LEASE, 10)] == [second_a.id]


async def test_a_stale_save_leaves_no_delivery_behind(store: TaskStore) -> None:
    task = make_task("t1")
    kept = delivery("t1", 1)
    await save(store, task, 1, kept)
    with pytest.raises(StaleTaskError):
        await save(store, task, 1, delivery("t1", 1, "https://hooks.example/b"))
    assert [d.id for d in await store.claim_deliveries(NOW, NOW + LEASE, 10)] == [kept.id]


async def test_a_lapsed_claim_goes_to_the_next_claimer(backend: Backend) -> None:
    first, second = await backend.open(), await backend.open()
    pending = delivery("t1", 1)
    await save(first, make_task("t1"), 1, pending)
    assert [d.id for d in await first.claim_deliveries(NOW, NOW + LEASE, 10)] == [pending.id]
    assert await second.claim_deliveries(NOW + LEASE / 2, NOW + LEASE, 10) == []
    later = NOW + LEASE + timedelta(seconds=1)
    again = await second.claim_deliveries(later, later + LEASE, 10)
    assert [(d.id, d.attempts) for d in again] == [(pending.id, 2)]


async def test_a_retried_delivery_is_due_again_at_its_time(store: TaskStore) -> None:
    pending = delivery("t1", 1)
    await save(store, make_task("t1"), 1, pending)
    await store.claim_deliveries(NOW, NOW + LEASE, 10)
    retry_at = NOW + timedelta(seconds=5)
    await store.retry_delivery(pending.id, retry_at, "HTTP 503")
    assert await store.claim_deliveries(retry_at - timedelta(seconds=1), NOW + LEASE, 10) == []
    [again] = await store.claim_deliveries(retry_at, retry_at + LEASE, 10)
    assert (again.id, again.attempts, again.last_error) == (pending.id, 2, "HTTP 503")


async def test_parking_gives_up_on_a_queue_and_lists_it(store: TaskStore) -> None:
    task = make_task("t1")
    dead = [delivery("t1", seq) for seq in (1, 2, 3)]
    other = delivery("t1", 1, "https://hooks.example/b")
    for seq, parked in enumerate(dead, start=1):
        await save(store, task, seq, parked, *([other] if seq == 1 else []))
    await store.claim_deliveries(NOW, NOW + LEASE, 10)
    parked_at = NOW + timedelta(minutes=1)
    assert await store.park_delivery(dead[0].id, parked_at, "HTTP 500") == 3
    later = parked_at + LEASE
    assert [d.id for d in await store.claim_deliveries(later, later + LEASE, 10)] == [other.id]
    listed = await store.parked_deliveries()
    assert {d.id for d in listed} == {d.id for d in dead}
    assert [d.seq for d in listed] == [3, 2, 1]  # newest first
    assert all(d.parked_at == parked_at and d.last_error == "HTTP 500" for d in listed)
    assert (await store.parked_deliveries(limit=1))[0].id == dead[2].id


async def test_a_refused_notification_is_parked_alone(store: TaskStore) -> None:
    task = make_task("t1")
    refused, next_one = delivery("t1", 1), delivery("t1", 2)
    await save(store, task, 1, refused)
    await save(store, task, 2, next_one)
    await store.claim_deliveries(NOW, NOW + LEASE, 10)
    assert await store.park_delivery(refused.id, NOW, "HTTP 400", with_queue=False) == 1
    assert [d.id for d in await store.claim_deliveries(NOW, NOW + LEASE, 10)] == [next_one.id]
    assert [d.id for d in await store.parked_deliveries()] == [refused.id]


async def test_concurrent_claimers_never_share_a_delivery(sql_backend: Backend) -> None:
    stores = [await sql_backend.open() for _ in range(3)]
    pending = [delivery(f"t{index}", 1) for index in range(30)]
    for item in pending:
        await save(stores[0], make_task(item.task_id), 1, item)
    claimed: list[str] = []
    for _ in range(10):  # rounds of claimers side by side, until every delivery was handed out
        rounds = await asyncio.gather(
            *(store.claim_deliveries(NOW, NOW + LEASE, 4) for store in stores for _ in range(2))
        )
        claimed += [d.id for found in rounds for d in found]
        if len(claimed) >= len(pending):
            break
    assert len(claimed) == len(set(claimed))  # none twice
    assert set(claimed) == {d.id for d in pending}


async def test_a_database_from_before_the_outbox_gets_one(sql_backend: Backend) -> None:
    engine = sql_backend.engine()
    try:
        async with engine.begin() as connection:  # the schema as it was at version 4
            await create_version_5(connection)
            await connection.execute(text(f"DROP TABLE {push_deliveries}"))
            for version in range(1, 5):
                step = {"version": version, "description": "old", "applied_at": NOW}
                await connection.execute(insert(schema_version).values(step))
        assert await upgrade(engine) == UpgradeResult(4, head_version())
    finally:
        await engine.dispose()
    store = await sql_backend.open()
    pending = delivery("t1", 1)
    await save(store, make_task("t1"), 1, pending)
    assert [d.id for d in await store.claim_deliveries(NOW, NOW + LEASE, 1)] == [pending.id]


async def test_deliveries_keep_the_trace_context_they_were_saved_with(store: TaskStore) -> None:
    traced = replace(
        delivery("t1", 1), traceparent=f"00-{'a' * 32}-{'b' * 16}-01", tracestate="k=v"
    )
    await save(store, make_task("t1"), 1, traced)
    await save(store, make_task("t2"), 1, delivery("t2", 1))
    claimed = {d.task_id: d for d in await store.claim_deliveries(NOW, NOW + LEASE, 10)}
    assert claimed["t1"].trace_context == {"traceparent": traced.traceparent, "tracestate": "k=v"}
    assert claimed["t2"].trace_context == {}


async def test_deliveries_waiting_before_traces_were_kept_are_untraced(
    sql_backend: Backend,
) -> None:
    engine = sql_backend.engine()
    waiting = delivery("t1", 1)
    try:
        async with engine.begin() as connection:
            await create_version_9(connection)
            for version in range(1, 10):
                step = {"version": version, "description": "old", "applied_at": NOW}
                await connection.execute(insert(schema_version).values(step))
            row = {
                key: value
                for key, value in delivery_values(waiting).items()
                if key not in ("traceparent", "tracestate")
            }
            await connection.execute(
                text(f"INSERT INTO {push_deliveries} ({', '.join(row)}) VALUES"
                     f" ({', '.join(':' + key for key in row)})"),
                row,
            )  # fmt: skip
        assert await upgrade(engine) == UpgradeResult(9, head_version())
    finally:
        await engine.dispose()
    store = await sql_backend.open()
    (claimed,) = await store.claim_deliveries(NOW, NOW + LEASE, 1)
    assert (claimed.id, claimed.trace_context) == (waiting.id, {})


async def test_the_outbox_counts_what_waits_and_what_is_parked(store: TaskStore) -> None:
    assert await store.outbox_depth() == OutboxDepth(0, 0)
    await parked_queue(store, "t1", seqs=3)
    await save(store, make_task("t2"), 1, delivery("t2", 1))
    assert await store.outbox_depth() == OutboxDepth(waiting=1, parked=3)


async def test_a_forgotten_task_takes_its_deliveries_along(backend: Backend) -> None:
    store = await backend.open(Retention(finished_task_ttl=timedelta(days=1)))
    done = make_task("done", TaskState.COMPLETED)
    await save(store, done, 1, delivery("done", 1))
    parked = (await store.claim_deliveries(NOW, NOW + LEASE, 1))[0]
    await store.park_delivery(parked.id, NOW, "HTTP 500")
    await store.cleanup(datetime.now(UTC) + timedelta(days=2))
    assert await store.parked_deliveries() == []


async def parked_queue(store: TaskStore, task_id: str, seqs: int = 3) -> list[Delivery]:
    """A task's deliveries to one webhook, all parked (the first failed for good)."""
    task = make_task(task_id)
    dead = [delivery(task_id, seq) for seq in range(1, seqs + 1)]
    for seq, item in enumerate(dead, start=1):
        await save(store, task, seq, item)
    [head] = await store.claim_deliveries(NOW, NOW + LEASE, 10)
    assert await store.park_delivery(head.id, NOW, "HTTP 500") == seqs
    return dead


async def test_requeued_deliveries_start_over_in_their_place(store: TaskStore) -> None:
    dead = await parked_queue(store, "t1")
    later = NOW + timedelta(days=2)  # past the first deadline
    assert await store.requeue_deliveries(later, later + timedelta(hours=1)) == 3
    assert await store.parked_deliveries() == []
    for item in dead:  # in order, one at a time, tries counted from zero
        [claimed] = await store.claim_deliveries(later, later + LEASE, 10)
        assert (claimed.id, claimed.attempts, claimed.parked_at) == (item.id, 1, None)
        assert claimed.deadline == later + timedelta(hours=1)
        assert claimed.last_error == "HTTP 500"  # why it was parked, until the next try
        await store.delivered(claimed.id)
    assert await store.requeue_deliveries(later, later) == 0  # none parked any more


async def test_requeue_picks_by_id_or_by_task(store: TaskStore) -> None:
    first = await parked_queue(store, "t1")
    second = await parked_queue(store, "t2", seqs=2)
    assert await store.requeue_deliveries(NOW, NOW, ids=[]) == 0
    assert await store.requeue_deliveries(NOW, NOW, ids=["no-such-delivery"]) == 0
    assert await store.requeue_deliveries(NOW, NOW, ids=[first[2].id, second[0].id]) == 2
    assert await store.requeue_deliveries(NOW, NOW, ids=[first[2].id]) == 0  # not parked now
    assert await store.requeue_deliveries(NOW, NOW, task_id="t2") == 1
    assert await store.requeue_deliveries(NOW, NOW, ids=[first[0].id], task_id="t2") == 0
    assert {d.id for d in await store.parked_deliveries()} == {first[0].id, first[1].id}
    # Each queue's oldest unparked one: parked deliveries hold up none.
    claimed = await store.claim_deliveries(NOW, NOW + LEASE, 10)
    assert {d.id for d in claimed} == {first[2].id, second[0].id}


async def test_a_requeued_delivery_waits_for_the_one_its_queue_has_under_way(
    store: TaskStore,
) -> None:
    task = make_task("t1")
    refused, under_way = delivery("t1", 1), delivery("t1", 2)
    await save(store, task, 1, refused)
    await save(store, task, 2, under_way)
    await store.claim_deliveries(NOW, NOW + LEASE, 10)
    await store.park_delivery(refused.id, NOW, "HTTP 404", with_queue=False)
    assert [d.id for d in await store.claim_deliveries(NOW, NOW + LEASE, 10)] == [under_way.id]
    assert await store.requeue_deliveries(NOW, NOW + timedelta(hours=1)) == 1
    # The first is the queue's head again, but not before the second's lease ran out.
    assert await store.claim_deliveries(NOW + LEASE / 2, NOW + LEASE, 10) == []
    end = NOW + LEASE
    assert [d.id for d in await store.claim_deliveries(end, end + LEASE, 10)] == [refused.id]


async def test_a_claim_racing_a_requeue_never_has_two_of_a_queue_under_way(
    sql_backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    claimer, operator = await sql_backend.open(), await sql_backend.open()
    refused, waiting = delivery("t1", 1), delivery("t1", 2)
    await save(claimer, make_task("t1"), 1, refused)
    await save(claimer, make_task("t1"), 2, waiting)
    await claimer.claim_deliveries(NOW, NOW + LEASE, 10)
    await claimer.park_delivery(refused.id, NOW, "HTTP 404", with_queue=False)
    # The requeue commits after SQLite's claimer found its candidates, before it writes.
    writing = claimer.db.writing  # type: ignore[attr-defined]

    @asynccontextmanager
    async def requeue_first() -> AsyncIterator[Any]:
        await operator.requeue_deliveries(NOW, NOW + timedelta(hours=1))
        async with writing() as connection:
            yield connection

    monkeypatch.setattr(claimer.db, "writing", requeue_first)
    raced = await claimer.claim_deliveries(NOW, NOW + LEASE, 10)
    monkeypatch.undo()
    then = await claimer.claim_deliveries(NOW, NOW + LEASE, 10)
    assert len(raced) + len(then) == 1  # one at a time
    end = NOW + LEASE
    assert [d.id for d in await claimer.claim_deliveries(end, end + LEASE, 10)] == [refused.id]
