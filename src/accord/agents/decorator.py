"""The `@agent` decorator: write a simple agent as one function."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeAlias, overload

from accord.agents.agent import Agent
from accord.agents.context import RequestContext
from accord.agents.executor import AgentExecutor, EventSink
from accord.agents.updater import TaskUpdater, to_parts
from accord.errors import InvalidAgentResponse
from accord.types import (
    Artifact,
    DataPart,
    FilePart,
    Message,
    Part,
    Role,
    TaskState,
    TaskStatus,
    TextPart,
    new_id,
)

Reply: TypeAlias = str | Part | Sequence[Part] | Message
"""What a function agent returns: text, parts or a whole message."""

Yielded: TypeAlias = str | Part | Sequence[Part] | Artifact | TaskState | TaskStatus | Message
"""What a streaming agent yields (see `agent`)."""

AgentFunction: TypeAlias = Callable[[RequestContext], object]
"""A function agent: returns a `Reply` (maybe awaitable) or is an async generator of `Yielded`."""


class FunctionExecutor(AgentExecutor):
    """Runs a decorated function as an executor."""

    def __init__(self, function: AgentFunction, *, task: bool, restartable: bool = False) -> None:
        self.function = function
        self.restartable = restartable
        self.streams = inspect.isasyncgenfunction(function)
        self.task_mode = task or self.streams

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        if self.streams:
            await self._run_generator(context, events)
            return
        if inspect.iscoroutinefunction(self.function):
            reply = await self.function(context)
        else:  # plain functions may block: keep them off the event loop
            reply = await asyncio.to_thread(self.function, context)
            if inspect.isawaitable(reply):
                reply = await reply
        reply = self._checked(reply)
        if self.task_mode:
            updater = TaskUpdater(context, events)
            await updater.start_work()
            if isinstance(reply, Message):
                await updater.complete(reply)
            else:
                await updater.add_artifact(reply)
                await updater.complete()
            return
        if not isinstance(reply, Message):
            reply = Message(
                message_id=new_id(),
                role=Role.AGENT,
                parts=to_parts(reply),
                context_id=context.context_id,
            )
        await events.send(reply)

    async def _run_generator(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater(context, events)
        await updater.start_work()
        state = TaskState.WORKING
        artifact_id: str | None = None
        generator: AsyncIterator[Yielded] = self.function(context)  # type: ignore[assignment]
        async for item in generator:
            if isinstance(item, TaskState):
                item = TaskStatus(state=item)
            if isinstance(item, TaskStatus):
                state = item.state
                await updater.update_status(state, item.message)
            elif isinstance(item, Message):
                await updater.update_status(state, item)
            elif isinstance(item, Artifact):
                await updater.add_artifact(
                    item.parts, artifact_id=item.artifact_id, name=item.name,
                    description=item.description, metadata=item.metadata,
                )  # fmt: skip
            else:
                append = artifact_id is not None
                artifact_id = await updater.add_artifact(
                    item, artifact_id=artifact_id, append=append
                )
        if not (state.is_terminal or state.is_interrupted):
            await updater.complete()

    def _checked(self, reply: object) -> Reply:
        if isinstance(reply, str | Message | TextPart | FilePart | DataPart):
            return reply
        if isinstance(reply, list | tuple) and all(
            isinstance(p, TextPart | FilePart | DataPart) for p in reply
        ):
            return list(reply)
        raise InvalidAgentResponse(
            f"agent function {self._name} returned {type(reply).__name__}; "
            "expected text, parts or a Message"
        )

    @property
    def _name(self) -> str:
        return getattr(self.function, "__qualname__", repr(self.function))


@overload
def agent(
    function: AgentFunction,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    task: bool = False,
    restartable: bool = False,
    **card: Any,
) -> Agent: ...


@overload
def agent(
    *,
    name: str | None = None,
    description: str | None = None,
    task: bool = False,
    restartable: bool = False,
    **card: Any,
) -> Callable[[AgentFunction], Agent]: ...


def agent(
    function: AgentFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    task: bool = False,
    restartable: bool = False,
    **card: Any,
) -> Agent | Callable[[AgentFunction], Agent]:
    """Turn a function into an `Agent`.

    - A function (sync or async) taking a `RequestContext` and returning text, parts or a
      `Message` answers with that message; with `task=True` it answers with a completed task
      whose artifact holds the reply.
    - An async generator answers with a task: it starts `working`; each yielded text or part
      is streamed as a chunk of one artifact; a yielded `Artifact` is sent whole; a
      `TaskState` or `TaskStatus` changes the status (yield `TaskStatus(state=INPUT_REQUIRED,
      message=...)` to ask for input); a `Message` is a progress note. When it ends the task
      is completed unless it already ended or waits for input.

    `restartable=True` lets another replica run the function again on a task whose server
    died. Other keyword arguments go to `Agent` (skills, version, input_modes, ...).
    """

    def wrap(func: AgentFunction) -> Agent:
        doc = inspect.getdoc(func) or ""
        return Agent(
            FunctionExecutor(func, task=task, restartable=restartable),
            name=name or func.__name__.replace("_", " ").strip().title(),
            description=description or doc.split("\n\n")[0] or func.__name__,
            **card,
        )

    return wrap(function) if function is not None else wrap
