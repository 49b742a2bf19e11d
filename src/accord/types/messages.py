"""Messages: one turn of the conversation between a user and an agent."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from accord.types._base import A2AModel, Metadata
from accord.types.ids import new_id
from accord.types.parts import Part, TextPart


class Role(StrEnum):
    """Who sent a message."""

    USER = "user"
    AGENT = "agent"


class Message(A2AModel):
    """One communication turn: a prompt, a reply or a status update."""

    kind: Literal["message"] = "message"
    message_id: str
    role: Role
    parts: list[Part]
    context_id: str | None = None
    task_id: str | None = None
    reference_task_ids: list[str] | None = None
    extensions: list[str] | None = None
    metadata: Metadata | None = None

    @classmethod
    def user(
        cls, text: str, *, context_id: str | None = None, task_id: str | None = None
    ) -> Message:
        """A user message holding one text part."""
        parts: list[Part] = [TextPart(text=text)]
        return cls(
            message_id=new_id(), role=Role.USER, parts=parts, context_id=context_id, task_id=task_id
        )

    @classmethod
    def agent(
        cls, text: str, *, context_id: str | None = None, task_id: str | None = None
    ) -> Message:
        """An agent message holding one text part."""
        parts: list[Part] = [TextPart(text=text)]
        return cls(
            message_id=new_id(),
            role=Role.AGENT,
            parts=parts,
            context_id=context_id,
            task_id=task_id,
        )

    @property
    def text(self) -> str:
        """The text of all text parts, joined by newlines."""
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart))
