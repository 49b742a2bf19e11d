"""Which parts of a user's message a remote agent gets: those its card says it takes."""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass

from accord.core.media_types import any_accepted
from accord.types import AgentCard, DataPart, FilePart, Part, TextPart

UNKNOWN_TYPE = "application/octet-stream"


def media_type(part: Part) -> str:
    """The media type of `part`: a file's declared type (without parameters), else the one its
    name suggests; data is JSON, text is plain text."""
    if isinstance(part, DataPart):
        return "application/json"
    if not isinstance(part, FilePart):
        return "text/plain"
    declared = (part.file.mime_type or "").split(";")[0].strip().lower()
    if declared in ("", UNKNOWN_TYPE):
        declared = mimetypes.guess_type(part.file.name or "")[0] or declared
    return declared or UNKNOWN_TYPE


def input_modes(card: AgentCard) -> list[str]:
    """Every media type the agent takes: its defaults and what any of its skills takes."""
    modes = list(card.default_input_modes)
    for skill in card.skills:
        modes += [mode for mode in skill.input_modes or () if mode not in modes]
    return modes


def accepts(card: AgentCard, part: Part) -> bool:
    """Whether the card says the agent takes `part` (a card naming no modes takes anything;
    `image/*` and `*/*` take what they cover)."""
    modes = input_modes(card)
    return not modes or any_accepted([media_type(part)], modes)


def described(part: Part) -> str:
    """The part, for a person: `receipt.png (image/png)`."""
    name = part.file.name if isinstance(part, FilePart) else None
    what = name or ("your data" if isinstance(part, DataPart) else "a file")
    return f"{what} ({media_type(part)})"


@dataclass(frozen=True, slots=True)
class Forwarding:
    """The parts each chosen agent gets (in the order of the cards given), and what the
    host could not pass on to any of them, said for the user."""

    parts: list[list[Part]]
    refused: list[str]


def forwarding(
    requests: Sequence[str], cards: Sequence[AgentCard], parts: Sequence[Part]
) -> Forwarding:
    """Each agent gets its `requests` text and the message's other `parts` its card takes;
    a part that no chosen agent takes is not sent, and is named in `refused` with why."""
    attached = [part for part in parts if not isinstance(part, TextPart)]
    each: list[list[Part]] = [
        [TextPart(text=request), *(part for part in attached if accepts(card, part))]
        for request, card in zip(requests, cards, strict=True)
    ]
    refused = [
        f"I did not pass on {described(part)}: {takers(cards)}."
        for part in attached
        if not any(accepts(card, part) for card in cards)
    ]
    return Forwarding(each, refused)


def takers(cards: Sequence[AgentCard]) -> str:
    """What the chosen agents take, by name: `Currency takes only text/plain, application/json`."""
    said = [f"{card.name} takes only {', '.join(input_modes(card))}" for card in cards]
    return "; ".join(said)
