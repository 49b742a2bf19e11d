"""The Redis bus reads what a replica needs: the records it follows, the cancels of its runs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from accord.core.records import EventRecord
from accord.runtime.redis_bus import RedisEventBus
from accord.types import TaskState, TaskStatus, TaskStatusUpdateEvent, new_id
from agents_for_tests import SAFETY_TIMEOUT, until
from services import redis_url


def working(task_id: str, seq: int) -> EventRecord:
    event = TaskStatusUpdateEvent(
        task_id=task_id, context_id="c", status=TaskStatus(state=TaskState.WORKING)
    )
    return EventRecord.of(task_id, seq, event, final=False)


class Counted:
    """A started bus, and the entries its reader took from Redis, by stream."""

    def __init__(self, bus: RedisEventBus) -> None:
        self.bus = bus
        self.read: dict[str, int] = {}
        self.cancels: list[str] = []

    async def start(self) -> None:
        await self.bus.start()
        redis: Any = self.bus._redis
        xread = redis.xread

        async def counting(streams: Any, **options: Any) -> Any:
            batches = await xread(streams, **options)
            for key, entries in batches or ():
                if b":replica:" not in key:
                    name = key.decode()
                    self.read[name] = self.read.get(name, 0) + len(entries)
            return batches

        redis.xread = counting

        async def heard(task_id: str) -> None:
            self.cancels.append(task_id)

        self.bus.on_cancel_request(heard)


@pytest.fixture
async def buses() -> AsyncIterator[Callable[[], Counted]]:
    url, prefix = await redis_url(), f"accord:test:{new_id()}"
    made: list[Counted] = []

    def make() -> Counted:
        made.append(Counted(RedisEventBus(url, stream=prefix, block_ms=100)))
        return made[-1]

    yield make
    for counted in made:
        await counted.bus.close()
    client = Redis.from_url(url)
    keys = [key async for key in client.scan_iter(f"{prefix}*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()


async def test_a_stream_on_the_replica_running_its_task_costs_no_bus_read(
    buses: Callable[[], Counted],
) -> None:
    runner, bystander = buses(), buses()
    await runner.start()
    await bystander.start()
    with runner.bus.running("t1"), runner.bus.subscribe("t1") as watching:
        for seq in (1, 2, 3):
            await runner.bus.publish(working("t1", seq))
        async with asyncio.timeout(SAFETY_TIMEOUT):
            assert [(await anext(watching)).seq for _ in range(3)] == [1, 2, 3]
        await asyncio.sleep(0.3)  # the readers' blocks come round at least once

    assert runner.read == {} and bystander.read == {}


async def test_a_follower_elsewhere_reads_only_the_task_it_follows(
    buses: Callable[[], Counted],
) -> None:
    runner, follower = buses(), buses()
    await runner.start()
    await follower.start()
    with (
        runner.bus.running("t1"),
        runner.bus.running("t2"),
        follower.bus.subscribe("t1") as watching,
    ):
        for seq in (1, 2):
            await runner.bus.publish(working("t1", seq))
            await runner.bus.publish(working("t2", seq))
        async with asyncio.timeout(SAFETY_TIMEOUT):
            assert [(await anext(watching)).seq for _ in range(2)] == [1, 2]

    assert set(follower.read) == {f"{follower.bus.stream}:t1"}
    assert runner.read == {}


async def test_a_cancel_request_reaches_only_the_replica_running_the_task(
    buses: Callable[[], Counted],
) -> None:
    runner, canceller, bystander = buses(), buses(), buses()
    for counted in (runner, canceller, bystander):
        await counted.start()
    with runner.bus.running("t1"):
        await canceller.bus.request_cancel("t1")
        await until(lambda: bool(runner.cancels), "the runner hearing the cancel")
        await asyncio.sleep(0.3)  # the others' blocks come round at least once

    assert runner.cancels == ["t1"]
    assert canceller.cancels == bystander.cancels == []
    assert bystander.read == {}


async def test_the_wake_stream_keeps_one_entry_and_expires(
    buses: Callable[[], Counted],
) -> None:
    """Each task a replica starts following wakes its reader: what that leaves in Redis
    stays one entry, gone a while after the last (a replica killed never deletes it)."""
    follower = buses()
    await follower.start()
    for number in range(20):
        with follower.bus.subscribe(f"t{number}"):
            pass
    redis: Any = follower.bus._redis
    key = follower.bus._wake_key
    await until(lambda: not follower.bus._waking, "the wake-ups being sent")
    assert await redis.xlen(key) == 1
    assert 0 < await redis.ttl(key) <= follower.bus.keep_seconds
