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
    near the last instead of on a random page. A task takes several ids: their random ends are
    drawn from the system a few hundred at a time, and the millisecond's text is kept while it
    lasts.
    """
    global _clock
    millisecond = time.time_ns() // 1_000_000
    clock = _clock  # read once: another thread may set it meanwhile
    if clock[0] != millisecond:
        text = millisecond.to_bytes(6, "big").hex()
        clock = _clock = millisecond, f"{text[:8]}-{text[8:]}"
    try:
        random_part = _random_parts.pop()
    except IndexError:  # none left (or another thread took the last): draw more
        drawn = _drawn_random_parts()
        random_part = drawn.pop()
        _random_parts.extend(drawn)
    return clock[1] + random_part


_RANDOM_PARTS_AT_ONCE = 256
_VARIANT_DIGITS = "89ab"  # RFC 9562's variant, 10, in the top bits of the digit

_clock = (-1, "")
"""The millisecond of the last id and its text, together."""
_random_parts: list[str] = []
os.register_at_fork(after_in_child=_random_parts.clear)  # a child must draw its own


def _drawn_random_parts() -> list[str]:
    """Ends of ids, `-7xxx-Vxxx-xxxxxxxxxxxx`: the version, then 72 random bits as hex
    digits and 2 more as the variant's digit `V`."""
    count = _RANDOM_PARTS_AT_ONCE
    digits = os.urandom(9 * count).hex()
    variants = os.urandom(count)
    return [
        f"-7{digits[at : at + 3]}-{_VARIANT_DIGITS[variants[index] & 3]}"
        f"{digits[at + 3 : at + 6]}-{digits[at + 6 : at + 18]}"
        for index, at in enumerate(range(0, 18 * count, 18))
    ]


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
