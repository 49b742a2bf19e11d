"""A Redis bus that cannot publish for a while: its entries go out late, or the replicas that
follow the task read what they missed from the task's log."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import pytest
from redis.asyncio import Redis

from accord.core.records import EventRecord
from accord.runtime import TaskRuntime
from accord.runtime.redis_bus import RedisEventBus
from accord.store import InMemoryTaskStore
from accord.types import (
    Message,
    MessageSendParams,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    new_id,
)
from agents_for_tests import SAFETY_TIMEOUT, GatedStreamer, until
from services import REDIS_URL, redis_url
from tcp_relay import TcpRelay

Buses = Callable[..., RedisEventBus]


@pytest.fixture
async def buses() -> AsyncIterator[Buses]:
    """Makes buses on one fresh stream prefix (through `url` when given), closed and their
    streams deleted afterwards."""
    url, prefix = await redis_url(), f"accord:test:{new_id()}"
    made: list[RedisEventBus] = []

    def make(through: str = url, **options: int) -> RedisEventBus:
        made.append(RedisEventBus(through, stream=prefix, block_ms=100, **options))
        return made[-1]

    yield make
    for bus in made:
        await bus.close()
    client = Redis.from_url(url)
    keys = [key async for key in client.scan_iter(f"{prefix}*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()


@pytest.fixture
async def relay() -> AsyncIterator[TcpRelay]:
    """A relay to the test Redis, to cut and restore; its URL is `relayed(relay)`."""
    target = urlsplit(await redis_url())
    with TcpRelay(target.hostname or "127.0.0.1", target.port or 6379) as made:
        yield made


def relayed(relay: TcpRelay) -> str:
    return urlsplit(REDIS_URL)._replace(netloc=f"127.0.0.1:{relay.port}").geturl()


def status(task_id: str, seq: int, state: TaskState) -> EventRecord:
    event = TaskStatusUpdateEvent(task_id=task_id, context_id="c", status=TaskStatus(state=state))
    return EventRecord.of(task_id, seq, event, final=state.is_terminal)


def logged(caplog: pytest.LogCaptureFixture, words: str) -> Callable[[], bool]:
    return lambda: any(words in record.getMessage() for record in caplog.records)


# --- the publishing side: a failed publish is tried again -----------------------------------


async def test_a_record_published_while_redis_is_unreachable_arrives_once_it_is_back(
    buses: Buses, relay: TcpRelay, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "accord.bus")
    runner, follower = buses(relayed(relay)), buses()
    await runner.start()
    await follower.start()
    with runner.running("t1"), follower.subscribe("t1") as watching:
        await runner.publish(status("t1", 1, TaskState.WORKING))
        async with asyncio.timeout(SAFETY_TIMEOUT):
            assert (await anext(watching)).seq == 1
        relay.cut()
        publishing = asyncio.create_task(runner.publish(status("t1", 2, TaskState.COMPLETED)))
        failed = logged(caplog, "publishing to")
        await until(lambda: failed() or publishing.done(), "the publish failing")
        relay.restore()
        async with asyncio.timeout(SAFETY_TIMEOUT):
            final = await anext(watching)
            await publishing

    assert (final.seq, final.ends_task) == (2, True)


async def test_once_a_publish_gave_up_the_next_ones_try_once_until_one_gets_through(
    buses: Buses, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "accord.bus")
    runner = buses(keep_seconds=2)
    await runner.start()
    redis = Redis.from_url(await redis_url())
    key = f"{runner.stream}:t1"
    await redis.set(key, "not a stream")  # Redis refuses every XADD to it: WRONGTYPE
    retried = logged(caplog, "retrying")
    try:
        await runner.publish(status("t1", 1, TaskState.WORKING))
        assert retried()  # the first one tried again, for up to keep_seconds
        caplog.clear()
        await redis.set(key, "not a stream")  # as the publish left it, without its EXPIRE
        await runner.publish(status("t1", 2, TaskState.WORKING))
        assert not retried() and logged(caplog, "could not publish")()
        await redis.delete(key)
        await runner.publish(status("t1", 3, TaskState.WORKING))
        await redis.set(key, "not a stream")
        caplog.clear()
        await runner.publish(status("t1", 4, TaskState.WORKING))
        assert retried()  # the one before got through: Redis is back
    finally:
        await redis.delete(key)
        await redis.aclose()


# --- the following side: what the bus lost comes from the task's log ------------------------


@asynccontextmanager
async def replicas(
    buses: Buses, relay: TcpRelay, agent: GatedStreamer, log_check_after: float | None
) -> AsyncIterator[tuple[TaskRuntime, TaskRuntime]]:
    """A runner publishing through `relay` (giving a publish up after a second), and a replica
    following its tasks straight from Redis, on one store; closed with the relay restored."""
    store = InMemoryTaskStore()
    follower_bus = buses()
    follower_bus.log_check_after = log_check_after
    runner = TaskRuntime(agent, store, buses(relayed(relay), keep_seconds=1))
    follower = TaskRuntime(GatedStreamer(), store, follower_bus)
    try:
        for runtime in (runner, follower):
            await runtime.open()
        yield runner, follower
    finally:
        relay.restore()
        await runner.close()
        await follower.close()


async def started(runner: TaskRuntime, agent: GatedStreamer) -> str:
    execution = await runner.start(MessageSendParams(message=Message.user("go")))
    execution.close()
    await agent.started.wait()
    return execution.task_id


async def check_followed(follower: TaskRuntime, task_id: str, seen: list[EventRecord]) -> None:
    """`seen` is the task's log from its first record seen on: nothing lost, nothing twice,
    up to the task's end."""
    log = await follower.store.events_after(task_id, seen[0].seq - 1, limit=100)
    assert [record.seq for record in seen] == [record.seq for record in log]
    assert [record.payload for record in seen[1:]] == [record.payload for record in log[1:]]
    assert seen[-1].ends_task
    assert (await follower.get_task(task_id)).status.state is TaskState.COMPLETED


async def test_a_follower_elsewhere_ends_with_the_task_though_the_bus_lost_its_last_records(
    buses: Buses, relay: TcpRelay
) -> None:
    agent = GatedStreamer(chunks=1)
    async with replicas(buses, relay, agent, log_check_after=0.2) as (runner, follower):
        task_id = await started(runner, agent)
        watcher = follower.watch(task_id)
        seen = [await anext(watcher)]
        relay.cut()  # the chunk and the end are saved, and never published
        agent.release_all()
        async with asyncio.timeout(SAFETY_TIMEOUT):
            seen += [record async for record in watcher]
        await check_followed(follower, task_id, seen)


async def test_a_follower_elsewhere_reads_a_record_the_bus_lost_once_a_later_one_comes(
    buses: Buses, relay: TcpRelay, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "accord.bus")
    agent = GatedStreamer(chunks=2)
    async with replicas(buses, relay, agent, log_check_after=None) as (runner, follower):
        task_id = await started(runner, agent)
        watcher = follower.watch(task_id)
        seen = [await anext(watcher)]
        relay.cut()
        agent.steps[0].open()
        await until(logged(caplog, "could not publish"), "the first chunk lost on the bus")
        relay.restore()
        agent.steps[1].open()  # published: the next chunk, then the end
        async with asyncio.timeout(SAFETY_TIMEOUT):
            seen += [record async for record in watcher]
        await check_followed(follower, task_id, seen)
