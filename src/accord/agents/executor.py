"""The interface an agent implements: execute a request, cancel a task."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Protocol

from accord.agents.context import RequestContext
from accord.core.call_context import CallContext
from accord.types import (
    Message,
    MessageSendParams,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)

AgentEvent = Message | Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
"""What an executor may emit: a reply Message, or Task state and its changes."""


class EventSink(Protocol):
    """Where an executor sends its events; the runtime applies each before `send` returns."""

    async def send(self, event: AgentEvent) -> None:
        """Apply one event (raises if the event is illegal for the task's current state)."""
        ...


@dataclass(frozen=True, slots=True)
class NamedTask:
    """The ids an agent gives the task a message starts (`AgentExecutor.name_task`): None for
    one the runtime makes; `prepared` is the agent's own, handed to its run as
    `RequestContext.prepared`."""

    task_id: str | None = None
    context_id: str | None = None
    prepared: object = None


class AgentExecutor(ABC):
    """An agent's logic.

    `execute` answers one incoming message: either send a single `Message` (no task is
    created), or send task events — status updates and artifacts — until the task is
    finished or waits for input. Use `TaskUpdater` for the second style.

    Set `restartable = True` when running `execute` again on the same task is safe: if the
    server running it dies, another replica then runs it again instead of failing it.
    """

    restartable: bool = False

    async def name_task(self, params: MessageSendParams, call: CallContext | None) -> NamedTask:
        """The ids of the task a message starts, asked before the run starts; by default the
        runtime makes them. An agent whose tasks are named elsewhere (a gateway: by the agent
        it relays to) answers with those; an A2AError it raises is the caller's answer."""
        return NamedTask()

    @abstractmethod
    async def execute(self, context: RequestContext, events: EventSink) -> None:
        """Handle the message in `context`, sending replies and task events to `events`."""

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        """Stop work on the task; the default marks it canceled.

        The runtime also cancels the coroutine running `execute` once this returns. It calls
        this too when its replica lost the task to another (one that took it over, or
        canceled it, while this one stalled): then nothing sent to `events` is saved.
        """
        from accord.agents.updater import TaskUpdater

        await TaskUpdater(context, events).cancel()
