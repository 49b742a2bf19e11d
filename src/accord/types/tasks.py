"""Tasks, their status and artifacts, and the events that change them."""

from __future__ import annotations

import time
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field

from accord.types._base import A2AModel, Metadata
from accord.types.messages import Message
from accord.types.parts import Part, TextPart


class TaskState(StrEnum):
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

    @property
    def is_terminal(self) -> bool:
        """A terminal task never changes again."""
        return self in TERMINAL_STATES

    @property
    def is_interrupted(self) -> bool:
        """The task waits for the client (more input or authentication)."""
        return self in INTERRUPTED_STATES


TERMINAL_STATES = frozenset(
    {TaskState.COMPLETED, TaskState.CANCELED, TaskState.FAILED, TaskState.REJECTED}
)
INTERRUPTED_STATES = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})


# The last second utc_now formatted, and its text: every status of every task is stamped, and
# the date and time change only once a second.
_second, _second_text = -1, ""


def utc_now() -> str:
    """The current time as the ISO 8601 string the protocol uses (UTC, milliseconds, `Z`)."""
    global _second, _second_text
    now = time.time()
    second = int(now)
    if second != _second:
        _second, _second_text = second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
    return f"{_second_text}.{int((now - second) * 1000):03d}Z"


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
