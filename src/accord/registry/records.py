"""The registry's records: an agent as it is kept, a change in its history, a page of results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from accord.codecs.card import read_card
from accord.types import AgentCard

Json = dict[str, Any]

UP = "up"
DOWN = "down"
ADDED = "added"
REMOVED = "removed"
"""Two events of an agent's history (the others are what a check found)."""


@dataclass(frozen=True, slots=True)
class AgentRecord:
    """An agent the registry keeps: the card URL it was added by, its card as served, whether
    it answers, the validators of its last fetch, and when it was added, changed and checked."""

    url: str
    document: Json
    status: str = UP
    etag: str | None = None
    last_modified: str | None = None
    signed_by: str | None = None
    revision: int = 1
    failures: int = 0
    added_at: datetime | None = None
    changed_at: datetime | None = None
    checked_at: datetime | None = None
    rank: float | None = None

    @property
    def card(self) -> AgentCard:
        """The canonical card (checked when it was recorded)."""
        return read_card(self.document)

    def to_json(self) -> Json:
        """The agent as the HTTP API and the A2A interface show it."""
        shown: Json = {
            "url": self.url,
            "name": self.document.get("name"),
            "description": self.document.get("description"),
            "status": self.status,
            "revision": self.revision,
            "signedBy": self.signed_by,
            "addedAt": _iso(self.added_at),
            "changedAt": _iso(self.changed_at),
            "checkedAt": _iso(self.checked_at),
            "card": self.document,
        }
        if self.rank is not None:
            shown["rank"] = round(self.rank, 6)
        return {key: value for key, value in shown.items() if value is not None}


@dataclass(frozen=True, slots=True)
class Change:
    """One entry of an agent's history: added, changed, down, up, rejected or removed."""

    url: str
    at: datetime
    event: str
    revision: int
    detail: str
    document: Json | None = None

    def to_json(self) -> Json:
        shown: Json = {
            "event": self.event,
            "at": _iso(self.at),
            "revision": self.revision,
            "detail": self.detail,
        }
        if self.document is not None:
            shown["card"] = self.document
        return shown


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page of a search: the agents in rank order, how many match in all, and the offset
    of the next page (None on the last)."""

    agents: list[AgentRecord]
    total: int
    next_offset: int | None = None
    query: Json = field(default_factory=dict)

    def to_json(self) -> Json:
        page: Json = {
            "agents": [agent.to_json() for agent in self.agents],
            "total": self.total,
            "query": self.query,
        }
        if self.next_offset is not None:
            page["nextOffset"] = self.next_offset
        return page


def card_json(text: str | None) -> Json | None:
    """A stored card's JSON (None stays None)."""
    if text is None:
        return None
    loaded: Json = json.loads(text)
    return loaded


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment is not None else None
