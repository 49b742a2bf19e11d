"""The agent sees a task's owner, not the anonymous caller, where no message brings the run:
the cancel hook of a task waiting for input, and a task run again after its replica died."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from accord import Agent, AgentExecutor, RequestContext, TaskUpdater
from accord.agents import EventSink
from accord.auth import ApiKey, Security
from accord.client import ApiKey as Key
from accord.client import Client
from accord.core import ANONYMOUS, Principal
from accord.core.call_context import CallContext
from accord.runtime import TaskRuntime
from accord.store import TaskStore, open_store
from accord.types import Message, MessageSendParams, Task, TaskState
from agents_for_tests import SAFETY_TIMEOUT
from rpc import served
from stores import Backend, open_backend
from test_recovery import expire, kill, opened, until_final

STORES = ("memory", "sqlite")


class RecordsPrincipals(AgentExecutor):
    """Asks for input, or (restartable) never finishes its first run and completes later
    ones; records whom each run and each cancel hook saw as the principal."""

    restartable = True

    def __init__(self, *, asks: bool = False) -> None:
        self.asks = asks
        self.runs: list[Principal] = []
        self.cancels: list[Principal] = []
        self.first_started = asyncio.Event()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        self.runs.append(context.principal)
        updater = TaskUpdater(context, events)
        if self.asks:
            await updater.requires_input("what next?")
            return
        await updater.start_work()
        if len(self.runs) == 1:
            self.first_started.set()
            await asyncio.get_running_loop().create_future()
        await updater.complete()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        self.cancels.append(context.principal)
        await TaskUpdater(context, events).cancel("stopped on request")


def server_store(name: str, tmp_path: Path) -> TaskStore | None:
    return open_store(f"sqlite:///{tmp_path / 'accord.db'}") if name == "sqlite" else None


@pytest.mark.parametrize("store_name", STORES)
async def test_the_cancel_hook_of_a_task_waiting_for_input_sees_the_caller(
    store_name: str, tmp_path: Path
) -> None:
    executor = RecordsPrincipals(asks=True)
    agent = Agent(executor, name="Asker", security=Security(ApiKey({"key-a": "alice"})))
    with served(agent.app(store=server_store(store_name, tmp_path))) as url:
        async with Client(url, credentials=[Key("key-a")]) as client:
            asked = await client.send("start")
            assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
            canceled = await client.cancel_task(asked.id)
    assert canceled.status.state is TaskState.CANCELED
    assert executor.cancels == [Principal("alice", scheme="apiKey")]


@pytest.fixture(params=STORES)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with open_backend(request.param, tmp_path) as opened_backend:
        yield opened_backend


def sent_by(principal: Principal) -> CallContext:
    return CallContext("http://agent.example", principal=principal)


async def test_a_cancel_without_a_request_shows_the_hook_the_tasks_owner(backend: Backend) -> None:
    executor = RecordsPrincipals(asks=True)
    runtime = await opened(TaskRuntime(executor, await backend.open()))
    try:
        params = MessageSendParams(message=Message.user("start"))
        execution = await runtime.start(params, call=sent_by(Principal("alice", scheme="apiKey")))
        async with asyncio.timeout(SAFETY_TIMEOUT):
            async for record in execution:
                assert not record.final or record.error is None
        assert execution.task is not None
        assert execution.task.status.state is TaskState.INPUT_REQUIRED
        for _ in range(1000):  # until the run has returned: then no run holds the task
            if not runtime.is_running(execution.task_id):
                break
            await asyncio.sleep(0)
        assert (await runtime.cancel(execution.task_id)).status.state is TaskState.CANCELED
    finally:
        await runtime.close()
    assert executor.cancels == [Principal.of_owner("apiKey:alice")]
    assert executor.cancels[0].id == "alice"


async def saved(store: TaskStore, task_id: str) -> None:
    """Wait until the store holds the task: a run's first save may commit after it started."""
    async with asyncio.timeout(SAFETY_TIMEOUT):
        while True:
            if await store.get(task_id) is not None:
                return
            await asyncio.sleep(0.01)


async def adopted(survivor: TaskRuntime, dead: TaskRuntime) -> int:
    """The orphans `survivor` adopts once `dead`'s heartbeat has expired: a heartbeat the dead
    replica had already sent may land after the first expiry, so it is expired again until
    something is adopted (or the safety timeout)."""
    async with asyncio.timeout(SAFETY_TIMEOUT):
        while True:
            await expire(survivor.store, dead)
            taken = await survivor.recover_orphans()
            if taken:
                return taken
            await asyncio.sleep(0.05)


async def resumed_run(backend: Backend, call: CallContext | None) -> tuple[Principal, Task]:
    """Whom the agent sees when a task `call` started is run again on another replica."""
    executor = RecordsPrincipals()
    first = await opened(TaskRuntime(executor, await backend.open()))
    second = await opened(TaskRuntime(executor, await backend.open()))
    try:
        execution = await first.start(MessageSendParams(message=Message.user("go")), call=call)
        execution.close()
        await asyncio.wait_for(executor.first_started.wait(), SAFETY_TIMEOUT)
        await saved(second.store, execution.task_id)  # and with it, who runs it
        kill(first)
        assert await adopted(second, first) == 1
        task = await until_final(second, execution.task_id)
    finally:
        await second.close()
    assert executor.runs[0] == (call.principal if call is not None else ANONYMOUS)
    return executor.runs[1], task


async def test_a_resumed_task_runs_as_its_owner(backend: Backend) -> None:
    seen, task = await resumed_run(backend, sent_by(Principal("alice", scheme="apiKey")))
    assert task.status.state is TaskState.COMPLETED
    assert (seen.id, seen.owner) == ("alice", "apiKey:alice")
    assert not seen.authenticated  # rebuilt from the store, not vouched for by a request


async def test_an_owner_named_anonymous_stays_apart_from_anonymous_callers(
    backend: Backend,
) -> None:
    seen, _ = await resumed_run(backend, sent_by(Principal("anonymous", scheme="apiKey")))
    assert (seen.id, seen.owner) == ("anonymous", "apiKey:anonymous")
    assert seen != ANONYMOUS


async def test_an_anonymous_task_resumes_anonymous(backend: Backend) -> None:
    seen, _ = await resumed_run(backend, None)
    assert seen == ANONYMOUS
