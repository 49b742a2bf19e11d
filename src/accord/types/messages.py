"""Messages: one turn of the conversation between a user and an agent."""

from __future__ import annotations

import os
import time
from typing import Literal

from accord.types._base import A2AModel, Metadata, WireEnum
from accord.types.parts import Part, TextPart


class Role(WireEnum):
    """Who sent a message."""

    USER = "user"
    AGENT = "agent"


def new_id() -> str:
    """A fresh identifier for a message, task, context or artifact: a time-ordered (version 7)
    UUID, its creation's millisecond followed by 74 random bits.

    Ids made later sort later, so a store's indexes keyed by task or context take each new one
    near the last instead of on a random page. Built from the bytes directly: the `uuid`
    module costs several times as much, and a task takes several ids.
    """
    raw = bytearray((time.time_ns() // 1_000_000).to_bytes(6, "big") + os.urandom(10))
    raw[6] = raw[6] & 0x0F | 0x70  # version 7
    raw[8] = raw[8] & 0x3F | 0x80  # RFC 9562 variant
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


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
