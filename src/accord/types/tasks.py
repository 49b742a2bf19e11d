"""Tasks, their status and artifacts, and the events that change them."""

from __future__ import annotations

import time
from typing import Annotated, Literal

from pydantic import Field

from accord.types._base import A2AModel, Metadata, WireEnum
from accord.types.messages import Message
from accord.types.parts import Part, TextPart


class TaskState(WireEnum):
    """Where a task is in its lifecycle."""

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    COMPLETED = "completed"
    CANCELED = "canceled"
    FAILED = "failed"
    REJECTED = "rejected"
    AUTH_REQUIRED = "auth-required"
    UNKNOWN = "unknown"

    # Plain attributes of each member, set below: read on every change of every task, where a
    # property would be a call and a frozenset lookup would hash the member in Python.
    is_terminal: bool
    """A terminal task never changes again."""
    is_interrupted: bool
    """The task waits for the client (more input or authentication)."""


TERMINAL_STATES = frozenset(
    {TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED, TaskState.REJECTED}
)
INTERRUPTED_STATES = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
for _state in TaskState:
    _state.is_terminal = _state in TERMINAL_STATES
    _state.is_interrupted = _state in INTERRUPTED_STATES
del _state


# The last second utc_now formatted, and its text: every status of every task is stamped, and
# the date and time change only once a second; the millisecond's text is looked up.
_second, _second_text = -1, ""
_MILLISECONDS = tuple(f".{millisecond:03d}Z" for millisecond in range(1000))


def utc_now() -> str:
    """The current time as the ISO 8601 string the protocol uses (UTC, milliseconds, `Z`)."""
    global _second, _second_text
    second, millisecond = divmod(time.time_ns() // 1_000_000, 1000)
    if second != _second:
        _second, _second_text = second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
    return _second_text + _MILLISECONDS[millisecond]


class TaskStatus(A2AModel):
    """The state of a task at one point in time, with an optional agent message."""

    state: TaskState
    message: Message | None = None
    timestamp: str | None = None


class Artifact(A2AModel):
    """An output the agent produced for a task."""

    artifact_id: str
    parts: list[Part]
    name: str | None = None
    description: str | None = None
    extensions: list[str] | None = None
    metadata: Metadata | None = None

    @property
    def text(self) -> str:
        """The text parts concatenated (streamed chunks read as one text)."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))


class Task(A2AModel):
    """The stateful unit of work an agent performs for a client."""

    kind: Literal["task"] = "task"
    id: str
    context_id: str
    status: TaskStatus
    artifacts: list[Artifact] | None = None
    history: list[Message] | None = None
    metadata: Metadata | None = None

    @property
    def text(self) -> str:
        """What the agent said: its artifacts' text, one artifact per line; when none holds
        text, the status message's (a question, or why the task failed)."""
        said = "\n".join(text for artifact in self.artifacts or () if (text := artifact.text))
        if said or self.status.message is None:
            return said
        return self.status.message.text


class TaskStatusUpdateEvent(A2AModel):
    """The task's status changed."""

    kind: Literal["status-update"] = "status-update"
    task_id: str
    context_id: str
    status: TaskStatus
    final: bool = False
    metadata: Metadata | None = None


class TaskArtifactUpdateEvent(A2AModel):
    """An artifact, or a chunk of one, was produced."""

    kind: Literal["artifact-update"] = "artifact-update"
    task_id: str
    context_id: str
    artifact: Artifact
    append: bool | None = None
    last_chunk: bool | None = None
    metadata: Metadata | None = None


TaskEvent = TaskStatusUpdateEvent | TaskArtifactUpdateEvent
"""An event that changes an existing task."""

StreamEvent = Annotated[
    Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent,
    Field(discriminator="kind"),
]
"""Anything a streaming response carries."""

SendResult = Annotated[Task | Message, Field(discriminator="kind")]
"""What a non-streaming send returns."""
