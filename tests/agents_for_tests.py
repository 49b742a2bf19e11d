"""Executors with controllable behaviour for the server and runtime tests, and the Gate they use."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping

from accord import A2AError, AgentExecutor, RequestContext, TaskUpdater
from accord.agents import AgentEvent, EventSink
from accord.errors import ContentTypeNotSupported
from accord.samples import echo
from accord.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Artifact,
    DataPart,
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
    new_id,
)

SAFETY_TIMEOUT = 10.0
"""Upper bound for a test waiting on something that should happen; only guards against hangs."""


async def until(condition: Callable[[], bool], what: str = "a condition") -> None:
    """Wait until `condition` holds, checking it every 20 ms, for at most SAFETY_TIMEOUT."""
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


class Gate:
    """A one-shot signal, opened from any thread and awaited on any event loop.

    The live servers run in their own thread and loop, so a plain asyncio.Event cannot
    connect an agent running there with the test that controls it.
    """

    def __init__(self, name: str = "gate") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._opened = False
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @property
    def is_open(self) -> bool:
        return self._opened

    def open(self) -> None:
        with self._lock:
            self._opened = True
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, future)

    async def wait(self, timeout: float | None = SAFETY_TIMEOUT) -> None:  # noqa: ASYNC109
        """Wait until the gate is open; the timeout only guards a test against hanging."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._opened:
                return
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, future))
        try:
            async with asyncio.timeout(timeout):
                await future
        except TimeoutError:
            raise AssertionError(f"{self.name} was not opened within {timeout} s") from None

    def __repr__(self) -> str:
        return f"Gate({self.name!r}, open={self._opened})"


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class RecordingSink(EventSink):
    """An EventSink that only keeps what it is sent, for testing executors without a runtime."""

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    async def send(self, event: AgentEvent) -> None:
        self.events.append(event)


class AsksThenCompletes(AgentExecutor):
    """Asks for the user's name (pausing the task in `pause`: input-required, or
    auth-required), then greets them in an artifact and completes."""

    QUESTION = "What is your name?"

    def __init__(self, pause: TaskState = TaskState.INPUT_REQUIRED) -> None:
        self.pause = pause

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        first_turn = context.is_new_task
        updater = TaskUpdater(context, events)
        await updater.start_work()
        if first_turn:
            await updater.update_status(self.pause, self.QUESTION)
            return
        await updater.add_artifact(f"Hello, {context.text}!", name="greeting")
        await updater.complete()


class AsksThenQuits(AgentExecutor):
    """Asks for input, then returns without a word when the answer comes."""

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        if context.is_new_task:
            await TaskUpdater(context, events).requires_input("Anything else?")


class Raises(AgentExecutor):
    """Raises `error`, after starting work on a task or before sending anything."""

    def __init__(self, error: Exception, *, after_start: bool = True) -> None:
        self.error = error
        self.after_start = after_start

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        if self.after_start:
            await TaskUpdater(context, events).start_work()
        raise self.error


def rejects_before_task(error: A2AError) -> Raises:
    """An executor that refuses the request with a protocol error before any event."""
    return Raises(error, after_start=False)


class GatedStreamer(AgentExecutor):
    """Works in steps the test releases: `working`, then one artifact chunk per step, then done.

    `started` opens once the task is `working`; chunk i is sent after `steps[i]` opens;
    `finished` opens after the task completed (so it is already saved).
    """

    def __init__(self, chunks: int = 1) -> None:
        self.started = Gate("started")
        self.steps = [Gate(f"step {i}") for i in range(chunks)]
        self.finished = Gate("finished")

    def release_all(self) -> None:
        for step in self.steps:
            step.open()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater(context, events)
        await updater.start_work()
        self.started.open()
        artifact_id: str | None = None
        for index, step in enumerate(self.steps):
            await step.wait(timeout=None)
            last = index == len(self.steps) - 1
            artifact_id = await updater.add_artifact(
                f"chunk {index}", artifact_id=artifact_id, append=index > 0, last_chunk=last
            )
        await updater.complete()
        self.finished.open()


class NeverFinishes(AgentExecutor):
    """Works until canceled; `cancel_called` opens in its `cancel`, `stopped` when its run ends."""

    def __init__(self) -> None:
        self.started = Gate("started")
        self.cancel_called = Gate("cancel called")
        self.stopped = Gate("stopped")

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        try:
            await TaskUpdater(context, events).start_work("working on it")
            self.started.open()
            await asyncio.get_running_loop().create_future()
        finally:
            self.stopped.open()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        self.cancel_called.open()
        await TaskUpdater(context, events).cancel("stopped on request")


class GoesBackToSubmitted(AgentExecutor):
    """Starts work, then emits the illegal transition working -> submitted."""

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater(context, events)
        await updater.start_work()
        await updater.update_status(TaskState.SUBMITTED)


class ReturnsUnfinished(AgentExecutor):
    """Starts work on a task, then returns without finishing it."""

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        await TaskUpdater(context, events).start_work()


class Silent(AgentExecutor):
    """Returns without sending anything: no reply, no task."""

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        return None


class NotJson:
    """A value no JSON encoder knows (think of a numpy array left in a result)."""


class SendsUnserializable(AgentExecutor):
    """Sends a reply (`as_message`), the whole task as its first event (`as_task`) or an
    artifact holding a value that cannot become JSON."""

    def __init__(self, *, as_message: bool = False, as_task: bool = False) -> None:
        self.as_message = as_message
        self.as_task = as_task

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        part = DataPart(data={"result": NotJson()})
        if self.as_message:
            await events.send(Message(message_id=new_id(), role=Role.AGENT, parts=[part]))
            return
        if self.as_task:
            status = TaskStatus(state=TaskState.COMPLETED)
            artifact = Artifact(artifact_id=new_id(), parts=[part])
            await events.send(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=status,
                    artifacts=[artifact],
                )
            )
            return
        updater = TaskUpdater(context, events)
        await updater.start_work()
        await updater.add_artifact("fine")
        await updater.add_artifact(part)
        await updater.complete()


class Switchboard(AgentExecutor):
    """Delegates each task to the executor named by the first word of the task's first message.

    Lets one live server show several behaviours; text with no known first word goes to
    `default`. Follow-up messages of a task go where its first message went.
    """

    def __init__(self, routes: Mapping[str, AgentExecutor], default: AgentExecutor) -> None:
        self.routes = dict(routes)
        self.default = default

    def route(self, context: RequestContext) -> AgentExecutor:
        history = context.task.history if context.task is not None else None
        text = history[0].text if history else context.text
        first_word = text.split(maxsplit=1)[0] if text.strip() else ""
        return self.routes.get(first_word, self.default)

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        await self.route(context).execute(context, events)

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        await self.route(context).cancel(context, events)


def switchboard(**more: AgentExecutor) -> Switchboard:
    """A Switchboard echoing by default, with the routes the server tests share: `reply` (a
    message agent), `ask` (AsksThenCompletes), `reject` (refuses with ContentTypeNotSupported
    before any event), and `more`."""
    routes: dict[str, AgentExecutor] = {
        "reply": echo.message_agent.executor,
        "ask": AsksThenCompletes(),
        "reject": rejects_before_task(ContentTypeNotSupported("this agent reads no text")),
    }
    return Switchboard({**routes, **more}, default=echo.agent.executor)


EXTENDED_CARD = AgentCard(
    name="Switchboard (extended)",
    description="More for members.",
    url="",
    version="1.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="audit", name="Audit", description="Audits.", tags=["internal"])],
)
"""The extended card of the test servers that have one: one skill only members see."""

HOST_TOKEN = "token-of-the-hosts-curator"
"""The token a host under test is given (`host_agent(token=...)`) to let tests change its agents."""
CURATOR = {"Authorization": f"Bearer {HOST_TOKEN}"}
