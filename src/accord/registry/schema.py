"""The registry's tables (SQLAlchemy Core) and its full-text index, as of the newest version."""

from __future__ import annotations

from sqlalchemy import (
    DDL,
    BigInteger,
    Column,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    event,
)

from accord.store.sql.migrations import Schema
from accord.store.sql.schema import UtcDateTime, versions_table

metadata = MetaData(
    naming_convention={
        "pk": "pk_%(table_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    }
)


def _key() -> String:
    """An identifier column; compared by code point (as Python compares str) on every backend."""
    return String().with_variant(String(collation="C"), "postgresql")


agents = Table(
    "accord_registry_agents",
    metadata,
    Column("id", Integer, primary_key=True),  # SQLite: the rowid, the search table's too
    Column("url", _key(), nullable=False, unique=True),  # the card URL it was added by
    Column("name", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("skills", Text, nullable=False),  # skill names, descriptions and examples: searched
    Column("tags", Text, nullable=False),  # the skills' tags, space separated: searched
    Column("card", Text, nullable=False),  # the card's JSON as served
    Column("signed_by", Text),  # the id of the trusted key that signed it, when checked
    Column("status", String(8), nullable=False),  # up, down
    Column("etag", Text),
    Column("last_modified", Text),
    Column("revision", Integer, nullable=False),  # 1 when added, one more each time it changes
    Column("failures", Integer, nullable=False),  # checks failed in a row
    Column("added_at", UtcDateTime(), nullable=False),
    Column("changed_at", UtcDateTime(), nullable=False),
    Column("checked_at", UtcDateTime(), nullable=False),
)

facets = Table(
    "accord_registry_facets",
    metadata,
    Column("url", _key(), nullable=False),
    Column("facet", String(16), nullable=False),  # skill, tag, input_mode, version, ...
    Column("value", _key(), nullable=False),  # lower case
    Index(None, "facet", "value"),
    Index(None, "url"),
)

history = Table(
    "accord_registry_history",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("url", _key(), nullable=False),
    Column("at", UtcDateTime(), nullable=False),
    Column("event", String(16), nullable=False),  # added, changed, down, up, rejected, removed
    Column("revision", Integer, nullable=False),
    Column("detail", Text, nullable=False),  # what changed, or why
    Column("card", Text),  # the card from then on (added, changed)
    Index(None, "url", "id"),
)

schema_version = versions_table("accord_registry_schema_version", metadata)

SEARCH_TABLE = "accord_registry_search"
"""SQLite: the FTS5 table of the searched columns (its rowid is the agent row's id)."""
SEARCHED = ("name", "description", "skills", "tags")
WEIGHTS = {"name": "A", "tags": "B", "skills": "B", "description": "C"}
"""PostgreSQL's weight of each searched column (SQLite's bm25 weights in `accord.registry.search`
say the same in numbers)."""


def search_document() -> str:
    """PostgreSQL: the weighted tsvector of an agent row, for its index and for ranking."""
    parts = [
        f"setweight(to_tsvector('english', coalesce({column}, '')), '{WEIGHTS[column]}')"
        for column in SEARCHED
    ]
    return " || ".join(parts)


# SQLite keeps a copy of the searched columns in FTS5, by triggers; PostgreSQL indexes the
# expression.
_SQLITE_SEARCH = (
    f"CREATE VIRTUAL TABLE {SEARCH_TABLE} USING fts5({', '.join(SEARCHED)},"
    " tokenize='porter unicode61')",
    f"CREATE TRIGGER {SEARCH_TABLE}_insert AFTER INSERT ON accord_registry_agents BEGIN"
    f" INSERT INTO {SEARCH_TABLE} (rowid, {', '.join(SEARCHED)})"
    f" VALUES (new.id, {', '.join('new.' + c for c in SEARCHED)}); END",
    f"CREATE TRIGGER {SEARCH_TABLE}_delete AFTER DELETE ON accord_registry_agents BEGIN"
    f" DELETE FROM {SEARCH_TABLE} WHERE rowid = old.id; END",
    f"CREATE TRIGGER {SEARCH_TABLE}_update AFTER UPDATE ON accord_registry_agents BEGIN"
    f" UPDATE {SEARCH_TABLE} SET {', '.join(f'{c} = new.{c}' for c in SEARCHED)}"
    " WHERE rowid = old.id; END",
)
_POSTGRES_SEARCH = (
    f"CREATE INDEX ix_{SEARCH_TABLE} ON accord_registry_agents USING GIN (({search_document()}))",
)
for _statement in _SQLITE_SEARCH:
    event.listen(agents, "after_create", DDL(_statement).execute_if(dialect="sqlite"))  # type: ignore[no-untyped-call]
for _statement in _POSTGRES_SEARCH:
    event.listen(agents, "after_create", DDL(_statement).execute_if(dialect="postgresql"))  # type: ignore[no-untyped-call]

REGISTRY_SCHEMA = Schema(metadata, schema_version, "agents, facets, history, search", ())
"""The registry's schema for `accord.store.sql.migrations.upgrade` (no later steps yet)."""
