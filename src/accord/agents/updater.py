"""TaskUpdater: the convenient way for an executor to move a task through its lifecycle."""

from __future__ import annotations

from collections.abc import Sequence

from accord.agents.context import RequestContext
from accord.agents.executor import EventSink
from accord.types import (
    DataPart,
    FilePart,
    Message,
    Metadata,
    Part,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
    new_id,
    utc_now,
)

Content = str | Part | Sequence[Part]
"""Text or parts, as accepted wherever an agent says something."""


def to_parts(content: Content) -> list[Part]:
    """Normalize text, one part or several parts into a list of parts."""
    if isinstance(content, str):
        return [TextPart(text=content)]
    if isinstance(content, TextPart | FilePart | DataPart):
        return [content]
    return list(content)


class TaskUpdater:
    """Sends status and artifact events for the task of one request."""

    def __init__(self, context: RequestContext, events: EventSink) -> None:
        self.context = context
        self.events = events
        self.task_id = context.task_id
        self.context_id = context.context_id

    def agent_message(self, content: Content, *, metadata: Metadata | None = None) -> Message:
        """An agent message bound to this task."""
        return Message(
            message_id=new_id(),
            role=Role.AGENT,
            parts=to_parts(content),
            task_id=self.task_id,
            context_id=self.context_id,
            metadata=metadata,
        )

    async def update_status(
        self,
        state: TaskState,
        message: Content | Message | None = None,
        *,
        metadata: Metadata | None = None,
    ) -> None:
        """Move the task to `state`, optionally with a message from the agent."""
        if message is not None and not isinstance(message, Message):
            message = self.agent_message(message)
        final = state.is_terminal or state.is_interrupted
        # One validation of the event with its status, not one for each model.
        event = {
            "task_id": self.task_id,
            "context_id": self.context_id,
            "status": {"state": state, "message": message, "timestamp": utc_now()},
            "final": final,
            "metadata": metadata,
        }
        await self.events.send(TaskStatusUpdateEvent.validated(event))

    async def submit(self, message: Content | Message | None = None) -> None:
        """Acknowledge the task without starting work yet."""
        await self.update_status(TaskState.SUBMITTED, message)

    async def start_work(self, message: Content | Message | None = None) -> None:
        """Mark the task as being worked on."""
        await self.update_status(TaskState.WORKING, message)

    async def add_artifact(
        self,
        content: Content,
        *,
        artifact_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        append: bool = False,
        last_chunk: bool | None = None,
        metadata: Metadata | None = None,
    ) -> str:
        """Send an artifact, or with `append=True` a further chunk of one; returns its id."""
        artifact_id = artifact_id or new_id()
        # One validation of the event with its artifact and text, as in update_status.
        text = isinstance(content, str)
        artifact = {
            "artifact_id": artifact_id,
            "parts": [{"kind": "text", "text": content}] if text else to_parts(content),
            "name": name,
            "description": description,
            "metadata": metadata,
        }
        event = {
            "task_id": self.task_id,
            "context_id": self.context_id,
            "artifact": artifact,
            "append": append or None,
            "last_chunk": last_chunk,
        }
        await self.events.send(TaskArtifactUpdateEvent.validated(event))
        return artifact_id

    async def append_artifact(
        self, artifact_id: str, content: Content, *, last_chunk: bool | None = None
    ) -> None:
        """Send one more chunk of an artifact already started."""
        await self.add_artifact(
            content, artifact_id=artifact_id, append=True, last_chunk=last_chunk
        )

    async def requires_input(self, message: Content | Message) -> None:
        """Pause the task until the client answers `message`."""
        await self.update_status(TaskState.INPUT_REQUIRED, message)

    async def requires_auth(self, message: Content | Message) -> None:
        """Pause the task until the client authenticates as `message` explains."""
        await self.update_status(TaskState.AUTH_REQUIRED, message)

    async def complete(self, message: Content | Message | None = None) -> None:
        """Finish the task successfully."""
        await self.update_status(TaskState.COMPLETED, message)

    async def fail(self, message: Content | Message | None = None) -> None:
        """Finish the task as failed, ideally saying why."""
        await self.update_status(TaskState.FAILED, message)

    async def reject(self, message: Content | Message | None = None) -> None:
        """Refuse the task."""
        await self.update_status(TaskState.REJECTED, message)

    async def cancel(self, message: Content | Message | None = None) -> None:
        """Finish the task as canceled."""
        await self.update_status(TaskState.CANCELED, message)
