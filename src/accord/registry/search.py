"""A search of the registry: free text, ranked by the database's full-text search (SQLite FTS5,
PostgreSQL's text search), filtered by facets, paged."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Select, and_, column, false, func, literal_column, null, select, table

from accord.registry.facets import FACETS
from accord.registry.records import DOWN, UP
from accord.registry.schema import SEARCH_TABLE, agents, facets, search_document

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_WORDS = 32
"""The words of a text searched for, at most (the first ones)."""
STATUSES = (UP, DOWN, "any")
SQLITE_WEIGHTS = (8.0, 2.0, 3.0, 4.0)
"""bm25's weight of each searched column (name, description, skills, tags): PostgreSQL's
weights A, C, B, B in numbers."""
_WORD = re.compile(r"\w+")
# Words that say nothing about what an agent does (PostgreSQL's English configuration drops
# its own stop words; SQLite's tokenizer keeps every word).
STOP_WORDS = frozenset(
    {"a", "an", "and", "any", "are", "can", "could", "do", "does", "for", "from", "i", "in", "is",
     "it", "me", "my", "of", "on", "or", "please", "some", "that", "the", "their", "them", "this",
     "to", "which", "who", "with", "would", "you", "agent", "agents", "what", "how", "when",
     "where", "there", "one", "someone", "something", "need", "want", "find", "help"}
)  # fmt: skip


class SearchError(ValueError):
    """A search that cannot be run as asked; the message says what to change."""


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """Free `text` (any words: an agent matching more of them ranks higher), `filters` (each
    facet of `accord.registry.facets.FACETS` to the values an agent must all have), agents
    of `status` (`up` by default, `down` or `any`), `limit` per page from `offset`."""

    text: str = ""
    filters: Mapping[str, Sequence[str]] = field(default_factory=dict)
    status: str = UP
    limit: int = DEFAULT_LIMIT
    offset: int = 0

    def __post_init__(self) -> None:
        unknown = sorted(set(self.filters) - set(FACETS))
        if unknown:
            raise SearchError(
                f"unknown filter(s) {', '.join(unknown)}: filter by {', '.join(FACETS)}"
            )
        if self.status not in STATUSES:
            raise SearchError(f"status is one of {', '.join(STATUSES)}, not {self.status!r}")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise SearchError(f"limit is from 1 to {MAX_LIMIT}, not {self.limit}")
        if self.offset < 0:
            raise SearchError(f"offset is 0 or more, not {self.offset}")

    @property
    def words(self) -> list[str]:
        """The words searched for: those of `text` that say something (lower case, once; the
        first MAX_WORDS)."""
        found = _WORD.findall(self.text.lower())
        return list(dict.fromkeys(w for w in found if w not in STOP_WORDS))[:MAX_WORDS]

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"text": self.text, "status": self.status}
        shown |= {name: list(values) for name, values in self.filters.items() if values}
        return shown | {"limit": self.limit, "offset": self.offset}


def search_statement(query: SearchQuery, dialect: str) -> tuple[Select[Any], Select[Any]]:
    """The statements of `query` on `dialect`: its page of agent rows (each with its `rank`,
    lower is better) and the count of every match."""
    conditions = [*_filters(query)]
    words = query.words
    rank: Any
    if query.text.strip() and not words:  # only stop words: nothing to look for
        conditions.append(false())
    if not words:
        base = select(agents, null().label("rank")).where(and_(*conditions))
        order = [agents.c.name, agents.c.url]
    elif dialect == "sqlite":
        found = table(SEARCH_TABLE, column("rowid"))
        matched = literal_column(SEARCH_TABLE).op("MATCH")(" OR ".join(f'"{w}"' for w in words))
        rank = func.bm25(literal_column(SEARCH_TABLE), *SQLITE_WEIGHTS)
        base = (
            select(agents, rank.label("rank"))
            .select_from(agents.join(found, found.c.rowid == agents.c.id))
            .where(matched, *conditions)
        )
        order = [rank, agents.c.name, agents.c.url]
    else:
        document: Any = literal_column(f"({search_document()})")
        wanted = func.to_tsquery(literal_column("'english'::regconfig"), " | ".join(words))
        rank = -func.ts_rank(document, wanted, 1)
        base = select(agents, rank.label("rank")).where(document.op("@@")(wanted), *conditions)
        order = [rank, agents.c.name, agents.c.url]
    page = base.order_by(*order).limit(query.limit).offset(query.offset)
    count = select(func.count()).select_from(base.subquery())
    return page, count


def _filters(query: SearchQuery) -> list[Any]:
    conditions: list[Any] = []
    if query.status != "any":
        conditions.append(agents.c.status == query.status)
    for facet, values in query.filters.items():
        for value in values:
            having = select(facets.c.url).where(
                facets.c.facet == facet, facets.c.value == value.strip().lower()
            )
            conditions.append(agents.c.url.in_(having))
    return conditions
