"""Executors that name the tasks they start (`AgentExecutor.name_task`, a gateway's), and a
first Task snapshot standing for the task as created."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from accord import AgentExecutor, RequestContext
from accord.agents import EventSink, NamedTask
from accord.core.call_context import CallContext
from accord.errors import InvalidAgentResponse, TaskNotFound
from accord.runtime import EventRecord, InProcessEventBus, TaskRuntime
from accord.store import InMemoryTaskStore
from accord.types import (
    Message,
    MessageSendParams,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from agents_for_tests import SAFETY_TIMEOUT


class Names(AgentExecutor):
    """Names each task it starts `task_id` in `context_id` (None: leaves it to the runtime),
    prepares `prepared`, and answers with a completed snapshot of the task."""

    def __init__(
        self,
        task_id: str | None,
        context_id: str | None = None,
        *,
        refuse: Exception | None = None,
    ) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self.refuse = refuse
        self.prepared: list[object] = []

    async def name_task(self, params: MessageSendParams, call: CallContext | None) -> NamedTask:
        if self.refuse is not None:
            raise self.refuse
        return NamedTask(self.task_id, self.context_id, prepared=("for", params.message.text))

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        self.prepared.append(context.prepared)
        done = TaskStatus(state=TaskState.COMPLETED)
        await events.send(Task(id=context.task_id, context_id=context.context_id, status=done))


@pytest.fixture
async def runtimes() -> AsyncIterator[list[TaskRuntime]]:
    made: list[TaskRuntime] = []
    yield made
    for runtime in made:
        await runtime.close()


def runtime_of(executor: AgentExecutor, made: list[TaskRuntime]) -> TaskRuntime:
    runtime = TaskRuntime(executor, InMemoryTaskStore(), InProcessEventBus())
    made.append(runtime)
    return runtime


async def run(runtime: TaskRuntime, text: str = "hello", **ids: str) -> list[EventRecord]:
    execution = await runtime.start(MessageSendParams(message=Message.user(text, **ids)))
    async with asyncio.timeout(SAFETY_TIMEOUT):
        return [record async for record in execution]


async def test_a_task_gets_the_ids_its_agent_names(runtimes: list[TaskRuntime]) -> None:
    executor = Names("theirs", "their-context")
    runtime = runtime_of(executor, runtimes)
    records = await run(runtime)
    task = await runtime.get_task("theirs")
    assert (task.id, task.context_id) == ("theirs", "their-context")
    assert task.history is not None
    assert (task.history[0].task_id, task.history[0].context_id) == ("theirs", "their-context")
    assert executor.prepared == [("for", "hello")]
    assert {record.task_id for record in records} == {"theirs"}


async def test_a_first_snapshot_is_the_task_as_created(runtimes: list[TaskRuntime]) -> None:
    records = await run(runtime_of(Names("theirs"), runtimes))
    [record] = records
    assert isinstance(record.event, Task) and record.final
    assert record.event.status.state is TaskState.COMPLETED


async def test_named_context_only(runtimes: list[TaskRuntime]) -> None:
    runtime = runtime_of(Names(None, "their-context"), runtimes)
    [record] = await run(runtime)
    assert isinstance(record.event, Task)
    assert record.event.context_id == "their-context" and record.event.id != "their-context"


async def test_an_agent_naming_an_existing_task_is_refused(runtimes: list[TaskRuntime]) -> None:
    runtime = runtime_of(Names("theirs"), runtimes)
    await run(runtime)
    with pytest.raises(InvalidAgentResponse, match="exists already"):
        await run(runtime)
    assert (await runtime.get_task("theirs")).status.state is TaskState.COMPLETED


async def test_an_error_naming_the_task_is_the_callers(runtimes: list[TaskRuntime]) -> None:
    runtime = runtime_of(Names("theirs", refuse=TaskNotFound("no such task upstream")), runtimes)
    with pytest.raises(TaskNotFound, match="upstream"):
        await run(runtime)
    with pytest.raises(TaskNotFound):
        await runtime.get_task("theirs")


async def test_a_continued_task_is_not_named_again(runtimes: list[TaskRuntime]) -> None:
    class AsksFirst(Names):
        async def execute(self, context: RequestContext, events: EventSink) -> None:
            self.prepared.append(context.prepared)
            state = TaskState.COMPLETED if context.task else TaskState.INPUT_REQUIRED
            await events.send(
                TaskStatusUpdateEvent(
                    task_id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=state),
                    final=True,
                )
            )

    executor = AsksFirst("theirs")
    runtime = runtime_of(executor, runtimes)
    await run(runtime)
    await run(runtime, "more", task_id="theirs")
    assert executor.prepared == [("for", "hello"), None]
    assert (await runtime.get_task("theirs")).status.state is TaskState.COMPLETED
