"""Replicas sharing a store and a Redis bus: cross-replica streams and cancel, crash recovery."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis

from accord import AgentExecutor, RequestContext, TaskUpdater
from accord.agents import EventSink
from accord.errors import UnsupportedOperation
from accord.runtime import InProcessEventBus, TaskRuntime
from accord.runtime.push import PushSender
from accord.runtime.redis_bus import RedisEventBus
from accord.runtime.webhook_guard import WebhookGuard
from accord.store import InMemoryTaskStore, TaskStore
from accord.types import (
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationConfig,
    Task,
    TaskState,
    new_id,
)
from agents_for_tests import SAFETY_TIMEOUT, GatedStreamer, NeverFinishes
from services import redis_url
from webhooks import AGENT_URL, LOOPBACK, Webhook, receiving


class CountsRuns(AgentExecutor):
    """Restartable: the first run never finishes; any later run completes the task."""

    restartable = True

    def __init__(self) -> None:
        self.runs = 0
        self.first_started = asyncio.Event()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        self.runs += 1
        updater = TaskUpdater(context, events)
        await updater.start_work()
        if self.runs == 1:
            self.first_started.set()
            await asyncio.get_running_loop().create_future()
        await updater.add_artifact(f"done on run {self.runs}")
        await updater.complete()


def send_params(text: str = "go") -> MessageSendParams:
    return MessageSendParams(message=Message.user(text))


async def started_task(runtime: TaskRuntime, ready: asyncio.Event) -> str:
    execution = await runtime.start(send_params())
    execution.close()
    await asyncio.wait_for(ready.wait(), SAFETY_TIMEOUT)
    return execution.task_id


async def until_final(runtime: TaskRuntime, task_id: str) -> Task:
    """The task once it ended or paused, followed through the runtime's own events."""
    try:
        async with asyncio.timeout(SAFETY_TIMEOUT):
            async for record in runtime.watch(task_id):
                if record.final:
                    break
    except UnsupportedOperation:  # already finished before we started watching
        pass
    return await runtime.get_task(task_id)


def kill(runtime: TaskRuntime) -> None:
    """Stop a replica the way a crash does: its runs and heartbeat stop, nothing is cleaned up."""
    heartbeat = runtime.replicas._loop
    if heartbeat is not None:
        heartbeat.cancel()
    for run in list(runtime._runs.values()):
        if run.worker is not None:
            run.worker.cancel()


async def expire(store: TaskStore, runtime: TaskRuntime) -> None:
    await store.heartbeat(runtime.replica_id, datetime.now(UTC) - timedelta(seconds=1))


@pytest.fixture
async def store() -> AsyncIterator[InMemoryTaskStore]:
    yield InMemoryTaskStore()


async def opened(runtime: TaskRuntime) -> TaskRuntime:
    await runtime.open()
    return runtime


async def test_a_live_runner_is_not_an_orphan(store: InMemoryTaskStore) -> None:
    agent = NeverFinishes()
    a = await opened(TaskRuntime(agent, store))
    b = await opened(TaskRuntime(NeverFinishes(), store))
    try:
        execution = await a.start(send_params())
        execution.close()
        await agent.started.wait()
        assert await b.recover_orphans() == 0
    finally:
        await a.close()
        await b.close()


async def test_a_dead_runners_task_fails_with_a_reason(store: InMemoryTaskStore) -> None:
    agent = NeverFinishes()
    a = await opened(TaskRuntime(agent, store))
    b = await opened(TaskRuntime(NeverFinishes(), store))
    try:
        execution = await a.start(send_params())
        execution.close()
        await agent.started.wait()
        kill(a)
        await expire(store, a)

        watcher = b.watch(execution.task_id)
        assert (await anext(watcher)).seq >= 2
        assert await b.recover_orphans() == 1
        final = await anext(watcher)
        assert final.final
        task = await b.get_task(execution.task_id)
        assert task.status.state is TaskState.FAILED
        assert task.status.message is not None
        assert "stopped before it finished" in task.status.message.text
        assert await b.recover_orphans() == 0  # taken over once, not again
    finally:
        await b.close()


async def test_a_restartable_agent_runs_again_elsewhere(store: InMemoryTaskStore) -> None:
    agent = CountsRuns()
    a = await opened(TaskRuntime(agent, store))
    b = await opened(TaskRuntime(agent, store))
    try:
        task_id = await started_task(a, agent.first_started)
        kill(a)
        await expire(store, a)
        assert await b.recover_orphans() == 1
        task = await until_final(b, task_id)
        assert task.status.state is TaskState.COMPLETED
        assert task.artifacts and task.artifacts[0].text == "done on run 2"
        assert task.history and "Resumed" in task.history[-1].text
    finally:
        await b.close()


async def test_closing_a_replica_hands_its_tasks_over_at_once(store: InMemoryTaskStore) -> None:
    agent = NeverFinishes()
    a = await opened(TaskRuntime(agent, store))
    b = await opened(TaskRuntime(NeverFinishes(), store))
    try:
        execution = await a.start(send_params())
        execution.close()
        await agent.started.wait()
        await a.close()
        assert await b.recover_orphans() == 1
        assert (await b.get_task(execution.task_id)).status.state is TaskState.FAILED
    finally:
        await b.close()


async def test_a_single_node_restart_recovers_what_was_running(store: InMemoryTaskStore) -> None:
    agent = NeverFinishes()
    first = await opened(TaskRuntime(agent, store, InProcessEventBus()))
    execution = await first.start(send_params())
    execution.close()
    await agent.started.wait()
    kill(first)
    await expire(store, first)
    second = await opened(TaskRuntime(NeverFinishes(), store, InProcessEventBus()))
    try:
        task = await until_final(second, execution.task_id)
        assert task.status.state is TaskState.FAILED
        assert task.status.message is not None
    finally:
        await second.close()


RedisBuses = Callable[[], RedisEventBus]


@pytest.fixture
async def redis_buses() -> AsyncIterator[RedisBuses]:
    """Makes buses of replicas sharing one fresh Redis stream, deleted after the test."""
    url, stream = await redis_url(), f"accord:test:{new_id()}"
    yield lambda: RedisEventBus(url, stream=stream)
    client = Redis.from_url(url)
    await client.delete(stream)
    await client.aclose()


async def test_replicas_see_each_others_events_over_redis(
    store: InMemoryTaskStore, redis_buses: RedisBuses
) -> None:
    agent = GatedStreamer(chunks=2)
    a = await opened(TaskRuntime(agent, store, redis_buses()))
    b = await opened(TaskRuntime(agent, store, redis_buses()))
    try:
        execution = await a.start(send_params())
        execution.close()
        await agent.started.wait()
        seen = []
        async with asyncio.timeout(SAFETY_TIMEOUT):
            watcher = b.watch(execution.task_id)
            seen.append(await anext(watcher))
            agent.release_all()
            async for record in watcher:
                seen.append(record)
        seqs = [r.seq for r in seen]
        assert seqs == sorted(set(seqs))
        assert seen[-1].final
        assert (await b.get_task(execution.task_id)).status.state is TaskState.COMPLETED
    finally:
        await a.close()
        await b.close()


async def test_cancel_on_one_replica_stops_the_agent_on_another(
    store: InMemoryTaskStore, redis_buses: RedisBuses
) -> None:
    agent = NeverFinishes()
    a = await opened(TaskRuntime(agent, store, redis_buses()))
    b = await opened(TaskRuntime(NeverFinishes(), store, redis_buses()))
    try:
        execution = await a.start(send_params())
        execution.close()
        await agent.started.wait()
        task = await asyncio.wait_for(b.cancel(execution.task_id), SAFETY_TIMEOUT)
        assert task.status.state is TaskState.CANCELED
        await agent.cancel_called.wait()
        await agent.stopped.wait()
    finally:
        await a.close()
        await b.close()


async def test_push_notifications_go_out_once_not_once_per_replica(
    store: InMemoryTaskStore, redis_buses: RedisBuses
) -> None:
    hook = Webhook()
    agent = GatedStreamer(chunks=1)
    with receiving(hook) as webhook_url:
        guard = WebhookGuard(LOOPBACK)
        a = await opened(
            TaskRuntime(agent, store, redis_buses(), push=PushSender(guard=guard, issuer=AGENT_URL))
        )
        b = await opened(
            TaskRuntime(agent, store, redis_buses(), push=PushSender(guard=guard, issuer=AGENT_URL))
        )
        try:
            params = send_params()
            params.configuration = MessageSendConfiguration(
                push_notification_config=PushNotificationConfig(url=webhook_url)
            )
            execution = await a.start(params)
            execution.close()
            await agent.started.wait()
            watcher = b.watch(execution.task_id)
            await anext(watcher)
            agent.release_all()
            async with asyncio.timeout(SAFETY_TIMEOUT):
                async for record in watcher:
                    if record.final:
                        break
            await hook.reached("completed").wait()
        finally:
            await a.close()
            await b.close()
    assert hook.states() == ["submitted", "working", "completed"]


async def test_the_redis_bus_closes_without_cancelling_a_blocked_read(
    redis_buses: RedisBuses,
) -> None:
    bus = redis_buses()
    await bus.start()
    reader = bus._reader
    assert reader is not None

    await bus.close()

    assert reader.done() and not reader.cancelled()  # it saw the flag and returned
