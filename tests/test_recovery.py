"""Replicas sharing a store and a Redis bus: cross-replica streams and cancel, crash recovery."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from redis.asyncio import Redis
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from accord import AgentExecutor, RequestContext, TaskUpdater
from accord.agents import EventSink
from accord.errors import UnsupportedOperation
from accord.runtime import InProcessEventBus, TaskRuntime
from accord.runtime.push import PushSender
from accord.runtime.redis_bus import RedisEventBus
from accord.runtime.shared_bus import SharedEventBus
from accord.runtime.socket_bus import SocketEventBus
from accord.runtime.socket_hub import Hub
from accord.store import InMemoryTaskStore, TaskStore
from accord.store.sql.schema import tasks
from accord.types import (
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationConfig,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
    new_id,
)
from accord.web.webhook_guard import WebhookGuard
from agents_for_tests import SAFETY_TIMEOUT, GatedStreamer, NeverFinishes
from services import redis_url
from stores import Backend, backend_fixture, open_backend  # noqa: F401 - fixtures
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
    for run in list(runtime._runs):
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


_WAITING = text(
    "SELECT count(*) FROM pg_stat_activity waiter WHERE :pid = ANY(pg_blocking_pids(waiter.pid))"
    " OR EXISTS (SELECT 1 FROM pg_stat_activity first WHERE :pid = ANY(pg_blocking_pids(first.pid))"
    " AND first.pid = ANY(pg_blocking_pids(waiter.pid)))"
)


class RowLock:
    """A transaction holding a task's row locked, as a slow one would: its saves wait."""

    def __init__(self, connection: AsyncConnection, pid: int) -> None:
        self._connection = connection
        self._pid = pid

    async def waiting(self) -> int:
        """How many sessions wait for this lock, or for one of those that wait for it."""
        count: int = (await self._connection.execute(_WAITING, {"pid": self._pid})).scalar_one()
        return count

    async def until(self, condition: Callable[[int], bool], what: str) -> None:
        """Wait until `condition` holds of how many sessions wait for this lock."""
        deadline = time.monotonic() + SAFETY_TIMEOUT
        while not condition(await self.waiting()):
            assert time.monotonic() < deadline, f"timed out waiting until {what}"
            await asyncio.sleep(0.01)


@asynccontextmanager
async def row_locked(backend: Backend, task_id: str) -> AsyncIterator[RowLock]:
    """The task's row locked (PostgreSQL) until the block ends, once there is one: a run's
    first saves may still be on their way when its agent is already working."""
    engine, watcher = backend.engine(), backend.engine()
    locking = select(tasks.c.id).where(tasks.c.id == task_id).with_for_update()
    deadline = time.monotonic() + SAFETY_TIMEOUT
    try:
        async with engine.begin() as holder, watcher.connect() as watching:
            pid = (await holder.execute(text("SELECT pg_backend_pid()"))).scalar_one()
            while (await holder.execute(locking)).first() is None:
                assert time.monotonic() < deadline, f"task {task_id} was never saved"
                await asyncio.sleep(0.01)
            yield RowLock(watching, pid)
    finally:
        await engine.dispose()
        await watcher.dispose()


async def test_a_closing_replica_gives_its_tasks_up_once_their_saves_committed(
    tmp_path: Path,
) -> None:
    async with open_backend("postgresql", tmp_path) as backend:
        agent = GatedStreamer(chunks=2)
        a = await opened(TaskRuntime(agent, await backend.open()))
        b = await opened(TaskRuntime(GatedStreamer(), await backend.open()))
        try:
            execution = await a.start(send_params())
            execution.close()
            await agent.started.wait()
            async with row_locked(backend, execution.task_id) as row:
                agent.steps[0].open()  # A's save of the chunk waits for the lock
                await row.until(lambda waiting: waiting == 1, "A's save waits for the lock")
                closing = asyncio.create_task(a.close())
                await asyncio.wait({closing}, timeout=0.5)  # ample to give the task up, wrongly
                # B looks for orphans while A's save is still pending.
                recovering = asyncio.create_task(b.recover_orphans())
                await row.until(
                    lambda waiting: recovering.done() or waiting > 1, "B recovered or waits"
                )
            await closing
            await recovering
            await b.recover_orphans()
            task = await b.get_task(execution.task_id)
            logged = await b.store.events_after(execution.task_id, 0)
        finally:
            await b.close()

    assert task.status.state is TaskState.FAILED, (
        f"B took the task over from A before A's last save committed: it is {task.status.state}"
    )
    assert [record.seq for record in logged] == list(range(1, len(logged) + 1))
    assert task.artifacts and task.artifacts[0].text == "chunk 0"  # A's save came first


async def test_resuming_while_the_failure_is_being_saved_gets_the_failure(
    tmp_path: Path,
) -> None:
    async with open_backend("postgresql", tmp_path) as backend:
        agent = NeverFinishes()
        a = await opened(TaskRuntime(agent, await backend.open()))
        b = await opened(TaskRuntime(NeverFinishes(), await backend.open()))
        try:
            execution = await a.start(send_params())
            seen = [await anext(execution) for _ in range(2)]  # the task, working: all there is
            execution.close()
            seen_seq = seen[-1].seq
            kill(a)
            await expire(b.store, a)
            async with row_locked(backend, execution.task_id) as row:
                recovering = asyncio.create_task(b.recover_orphans())
                await row.until(lambda waiting: waiting == 1, "B's save of the failure waits")
                resumed = b.watch(execution.task_id, after_seq=seen_seq)
                following = asyncio.create_task(anext(resumed))
                await asyncio.wait({following}, timeout=0.5)  # ample to read what is saved
            record = await following
            await recovering
        finally:
            await b.close()

    assert record.seq == seen_seq + 1 and record.ends_task
    assert isinstance(record.event, TaskStatusUpdateEvent)
    assert record.event.status.state is TaskState.FAILED


SharedBuses = Callable[[], SharedEventBus]


@asynccontextmanager
async def buses_on(channel: str, tmp_path: Path) -> AsyncIterator[SharedBuses]:
    """Makes buses of replicas sharing one channel, gone after the block: a fresh Redis
    stream (`redis`), or a hub on a Unix socket (`socket`), as `accord serve --workers` runs."""
    if channel == "redis":
        url, stream = await redis_url(), f"accord:test:{new_id()}"
        yield lambda: RedisEventBus(url, stream=stream)
        client = Redis.from_url(url)
        await client.delete(stream)
        await client.aclose()
        return
    path = str(tmp_path / "bus.sock")
    hub = asyncio.create_task(Hub(path).serve())
    yield lambda: SocketEventBus(path)
    hub.cancel()
    await asyncio.gather(hub, return_exceptions=True)


@pytest.fixture
async def redis_buses(tmp_path: Path) -> AsyncIterator[SharedBuses]:
    async with buses_on("redis", tmp_path) as buses:
        yield buses


@pytest.fixture(params=["redis", "socket"])
async def shared_buses(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[SharedBuses]:
    async with buses_on(request.param, tmp_path) as buses:
        yield buses


async def test_replicas_see_each_others_events_over_a_shared_bus(
    store: InMemoryTaskStore, shared_buses: SharedBuses
) -> None:
    agent = GatedStreamer(chunks=2)
    a = await opened(TaskRuntime(agent, store, shared_buses()))
    b = await opened(TaskRuntime(agent, store, shared_buses()))
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
    store: InMemoryTaskStore, shared_buses: SharedBuses
) -> None:
    agent = NeverFinishes()
    a = await opened(TaskRuntime(agent, store, shared_buses()))
    b = await opened(TaskRuntime(NeverFinishes(), store, shared_buses()))
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
    store: InMemoryTaskStore, shared_buses: SharedBuses
) -> None:
    hook = Webhook()
    agent = GatedStreamer(chunks=1)
    with receiving(hook) as webhook_url:
        guard = WebhookGuard(LOOPBACK)
        a, b = [
            await opened(
                TaskRuntime(
                    agent, store, shared_buses(), push=PushSender(guard=guard, issuer=AGENT_URL)
                )
            )
            for _ in range(2)
        ]
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
    redis_buses: SharedBuses,
) -> None:
    bus = redis_buses()
    await bus.start()
    reader = bus._reader
    assert reader is not None

    await bus.close()

    assert reader.done() and not reader.cancelled()  # it saw the flag and returned


# --- a replica that stalled: fenced out of the tasks it lost ----------------------------------


class Stalls(AgentExecutor):
    """Starts work, waits until told to wake, then goes on as if nothing happened: an
    artifact (whatever sending it raised), then the end."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.wake = asyncio.Event()
        self.canceled = asyncio.Event()
        self.swallowed: list[Exception] = []

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater(context, events)
        await updater.start_work()
        self.started.set()
        await self.wake.wait()
        try:
            await updater.add_artifact("written after waking up")
        except Exception as exc:
            self.swallowed.append(exc)
        await asyncio.sleep(0.05)
        await updater.complete()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        self.canceled.set()
        await TaskUpdater(context, events).cancel()


async def saved_working(store: TaskStore, task_id: str) -> None:
    """Wait until the store has the task working (its runner claimed with it)."""
    for _ in range(int(SAFETY_TIMEOUT * 100)):
        stored = await store.get(task_id)
        if stored is not None and stored.task.status.state is TaskState.WORKING:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"task {task_id} was never saved working")


async def test_a_replica_waking_up_after_a_takeover_stops_and_leaves_the_task_as_it_ended(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    agent = Stalls()
    a = await opened(TaskRuntime(agent, await backend.open()))
    b = await opened(TaskRuntime(Stalls(), await backend.open()))
    try:
        task_id = await started_task(a, agent.started)
        await saved_working(b.store, task_id)
        assert a.replicas._loop is not None
        a.replicas._loop.cancel()  # A stalls: its heartbeat stops, its run does not
        await expire(b.store, a)
        assert await b.recover_orphans() == 1
        ended = await b.get_task(task_id)
        logged = await b.store.events_after(task_id, 0)

        run = a._runs.get(task_id)
        assert run is not None
        worker = run.worker
        assert worker is not None
        agent.wake.set()
        await asyncio.wait_for(agent.canceled.wait(), SAFETY_TIMEOUT)
        await asyncio.wait_for(asyncio.wait({worker}), SAFETY_TIMEOUT)

        assert ended.status.state is TaskState.FAILED
        assert await b.get_task(task_id) == ended == await a.get_task(task_id)
        assert await b.store.events_after(task_id, 0) == logged
        assert [record.final for record in logged].count(True) == 1 and logged[-1].final
        lines = [r for r in caplog.records if task_id in r.getMessage()]
        assert [(r.levelname, r.name) for r in lines] == [
            ("WARNING", "accord.runtime"),  # B: took over
            ("WARNING", "accord.runtime"),  # A: lost it
        ]
        assert "no longer this replica's" in lines[1].getMessage()
    finally:
        await a.close()
        await b.close()
