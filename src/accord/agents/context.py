"""What an executor is told about the request it serves."""

from __future__ import annotations

from dataclasses import dataclass, field

from accord.core import ANONYMOUS, Principal
from accord.core.call_context import CallContext
from accord.core.outbound import trace_headers
from accord.types import (
    DataPart,
    FilePart,
    Message,
    MessageSendConfiguration,
    Metadata,
    Task,
    TaskStatus,
)


@dataclass(slots=True)
class RequestContext:
    """The incoming message and the task it belongs to.

    `task_id` and `context_id` are always set: taken from the message, or generated for a new
    task. `task` is the existing task when the message continues one, else None until the
    agent's first event creates it: the task as it is now, which moves on with each event the
    agent sends. `status_on_arrival` is its status when the message came, and stays so. `call`
    is the request that brought the message (None for a task run again after a crash);
    `task_owner` stands for whoever owns the task when no call says (`Principal.of_owner`).
    """

    message: Message
    task_id: str
    context_id: str
    task: Task | None = None
    configuration: MessageSendConfiguration | None = None
    metadata: Metadata = field(default_factory=dict)
    call: CallContext | None = None
    task_owner: Principal | None = None
    prepared: object = None
    """What the executor's `name_task` prepared for this run (None when it prepared nothing)."""
    status_on_arrival: TaskStatus | None = field(init=False)
    """The task's status when the message came (its state, and the question it asked, if it
    asked one); None for a message that starts a task."""

    def __post_init__(self) -> None:
        self.status_on_arrival = self.task.status if self.task is not None else None

    @property
    def text(self) -> str:
        """The text parts of the incoming message, joined by newlines."""
        return self.message.text

    @property
    def files(self) -> list[FilePart]:
        """The files the incoming message carries (`FilePart.content` reads an inline one)."""
        return [part for part in self.message.parts if isinstance(part, FilePart)]

    @property
    def data(self) -> list[Metadata]:
        """The structured data the incoming message carries, one object per data part."""
        return [part.data for part in self.message.parts if isinstance(part, DataPart)]

    @property
    def conversation(self) -> list[Message]:
        """The conversation so far, oldest first: the task's history (the caller's messages
        and the agent's questions and notes) ending with the incoming message. On a task's
        first turn (`task` is None) that is the incoming message alone."""
        history = list(self.task.history or ()) if self.task is not None else []
        if not any(m.message_id == self.message.message_id for m in history):
            history.append(self.message)
        return history

    @property
    def is_new_task(self) -> bool:
        """True when the message starts a task rather than continuing one (before and after
        the agent's first event creates it)."""
        return self.status_on_arrival is None

    @property
    def principal(self) -> Principal:
        """Who sent the message, as the server authenticated them; for a task run again after a
        crash, its owner (not `authenticated`: no request vouched for it this time)."""
        if self.call is not None:
            return self.call.principal
        return self.task_owner if self.task_owner is not None else ANONYMOUS

    @property
    def base_url(self) -> str | None:
        """The URL the agent is served at (no trailing slash), when known: agents that serve
        routes of their own (`Agent(routes=...)`) build links to them from it."""
        return self.call.base_url.rstrip("/") if self.call is not None else None

    @property
    def trace_headers(self) -> dict[str, str]:
        """The trace context the request came with (`traceparent`, `tracestate`, `baggage`),
        for a call to another agent to continue the trace: `Client(url, headers=...)`.
        With tracing on (docs/operations.md) accord's client adds it by itself."""
        return trace_headers(self.call.headers) if self.call is not None else {}
