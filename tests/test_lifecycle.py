"""RunLifecycle: what an executor emits becomes its task's changes or its reply; failures end it."""

from __future__ import annotations

import asyncio

import pytest

from accord.agents import AgentExecutor, EventSink, RequestContext, TaskUpdater
from accord.errors import InvalidAgentResponse
from accord.runtime.bus import InProcessEventBus
from accord.runtime.lifecycle import RunLifecycle, status_event
from accord.runtime.runs import Runs
from accord.runtime.staging import Staging
from accord.store import InMemoryTaskStore, LostTaskError
from accord.types import Message, Role, TaskState, TextPart, new_id
from agents_for_tests import SAFETY_TIMEOUT, Raises
from runtime_parts import new_run


def lifecycle(executor: Raises | None = None) -> tuple[RunLifecycle, InMemoryTaskStore]:
    store, bus = InMemoryTaskStore(), InProcessEventBus()
    staging = Staging(store, bus, "r1", None, on_lost=lambda run, reason: None)
    executor = executor or Raises(ValueError("unused"))
    return RunLifecycle(executor, Runs(), staging, bus, debug=True), store


def reply(text: str) -> Message:
    return Message(message_id=new_id(), role=Role.AGENT, parts=[TextPart(text=text)])


async def test_a_message_before_any_task_is_the_reply_and_the_last_word() -> None:
    parts, store = lifecycle()
    run = new_run()
    subscription = parts.bus.subscribe(run.task_id)
    await parts.emit(run, reply("hello"))
    published = await anext(subscription)
    assert published.seq == 0 and published.final
    assert isinstance(published.event, Message)
    assert published.event.context_id == run.context.context_id
    with pytest.raises(InvalidAgentResponse, match="already replied"):
        await parts.emit(run, reply("again"))
    assert await store.get(run.task_id) is None
    subscription.close()


async def test_the_first_event_creates_the_task_and_a_lost_run_emits_nothing_more() -> None:
    parts, _ = lifecycle()
    run = new_run()
    await parts.emit(run, status_event(run.task_id, run.context.context_id, TaskState.WORKING))
    assert run.task is not None and run.seq == 2  # the task, then its change
    run.lost = True
    with pytest.raises(LostTaskError):
        await parts.emit(run, status_event(run.task_id, run.context.context_id, TaskState.FAILED))
    assert run.seq == 2


async def test_an_executor_that_raises_fails_its_task_and_its_run_ends() -> None:
    parts, store = lifecycle(Raises(ValueError("bad input")))
    run = new_run()
    parts.runs.add(run)
    parts.launch(run)
    assert run.worker is not None
    await asyncio.wait_for(run.worker, SAFETY_TIMEOUT)
    stored = await store.get(run.task_id)
    assert stored is not None and stored.task.status.state is TaskState.FAILED
    message = stored.task.status.message
    assert message is not None and "ValueError: bad input" in message.parts[0].text  # type: ignore[union-attr]
    assert run.task_id not in parts.runs


def test_a_status_event_carries_the_text_as_the_agents_message() -> None:
    event = status_event("t1", "c1", TaskState.CANCELED, "stopped")
    assert event.final and event.status.state is TaskState.CANCELED
    assert event.status.message is not None and event.status.message.role is Role.AGENT
    assert status_event("t1", "c1", TaskState.WORKING).status.message is None


class ReturnsWhenTold(AgentExecutor):
    """Starts work, then returns when told to: its task ended by another call meanwhile."""

    def __init__(self) -> None:
        self.working = asyncio.Event()
        self.go = asyncio.Event()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        await TaskUpdater(context, events).start_work()
        self.working.set()
        await self.go.wait()


async def test_an_executor_returning_while_a_cancel_records_the_end_leaves_that_end() -> None:
    """A gateway's run returns once its upstream said the task was canceled, while the
    cancel relaying the same end is being recorded: that end is the task's, no failure."""
    executor = ReturnsWhenTold()
    parts, store = lifecycle(executor)
    run = new_run()
    parts.runs.add(run)
    subscription = parts.bus.subscribe(run.task_id)
    parts.launch(run)
    await executor.working.wait()
    canceled = status_event(run.task_id, run.context.context_id, TaskState.CANCELED)
    ending = asyncio.create_task(parts.emit(run, canceled))  # applied, then recorded
    executor.go.set()
    assert run.worker is not None
    await asyncio.wait_for(asyncio.gather(run.worker, ending), SAFETY_TIMEOUT)
    records = []
    async for record in subscription:
        records.append(record)
        if record.final or record.error is not None:
            break
    assert [r.error for r in records] == [None] * len(records)
    stored = await store.get(run.task_id)
    assert stored is not None and stored.task.status.state is TaskState.CANCELED
