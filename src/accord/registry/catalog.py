"""CardCatalog: the registry's store of cards (SQLAlchemy async: SQLite by default, PostgreSQL
to share), with their facets, their history and the full-text index, schema versioned."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from accord.registry.facets import card_facets, card_text
from accord.registry.records import ADDED, REMOVED, AgentRecord, Change, SearchPage, card_json
from accord.registry.schema import REGISTRY_SCHEMA, agents, facets, history
from accord.registry.search import SearchQuery, search_statement
from accord.store.sql.database import SqlDatabase
from accord.store.sql.engine import create_sql_engine
from accord.store.sql.migrations import UpgradeResult, upgrade
from accord.types import AgentCard

DEFAULT_CATALOG_URL = "sqlite:///.accord/registry.db"
"""Where `accord registry serve` keeps its cards unless told otherwise."""


class CatalogDatabase(SqlDatabase):
    """The registry's database: the engine of a task store's, brought to the registry's schema."""

    async def upgrade(self) -> UpgradeResult:
        return await upgrade(self.engine, schema=REGISTRY_SCHEMA)


class CardCatalog:
    """The agents a registry keeps, by the card URL each was added by (`open_catalog(url)`)."""

    def __init__(self, database: SqlDatabase) -> None:
        self.database = database

    async def open(self) -> None:
        """Create or upgrade the schema; idempotent."""
        await self.database.open()

    async def close(self) -> None:
        await self.database.close()

    async def get(self, url: str) -> AgentRecord | None:
        """The agent added by `url`, or None."""
        async with self.database.reading() as connection:
            row = (await connection.execute(select(agents).where(agents.c.url == url))).first()
        return _record(row._mapping) if row is not None else None

    async def urls(self) -> list[str]:
        """The card URL of every agent kept, oldest first."""
        async with self.database.reading() as connection:
            rows = await connection.execute(select(agents.c.url).order_by(agents.c.id))
        return [url for (url,) in rows]

    async def record(self, agent: AgentRecord, card: AgentCard, event: str, detail: str) -> None:
        """Keep `agent` (added, or its `card` changed) with its facets and search text, and log
        `event` in its history with the card from then on; in one transaction."""
        text = card_text(card)
        now = datetime.now(UTC)
        stored = json.dumps(agent.document, separators=(",", ":"))
        row = {
            "url": agent.url,
            "name": text.name,
            "description": text.description,
            "skills": text.skills,
            "tags": text.tags,
            "card": stored,
            "signed_by": agent.signed_by,
            "status": agent.status,
            "etag": agent.etag,
            "last_modified": agent.last_modified,
            "revision": agent.revision,
            "failures": agent.failures,
            "added_at": agent.added_at or now,
            "changed_at": now,
            "checked_at": now,
        }
        changes = {name: value for name, value in row.items() if name not in ("url", "added_at")}
        upsert = self.database.insert(agents).values(row)
        upsert = upsert.on_conflict_do_update(index_elements=[agents.c.url], set_=changes)
        async with self.database.writing() as connection:
            await connection.execute(upsert)  # one row per URL, also when two add it at once
            await connection.execute(delete(facets).where(facets.c.url == agent.url))
            pairs = sorted(card_facets(card))
            if pairs:
                rows = [{"url": agent.url, "facet": f, "value": v} for f, v in pairs]
                await connection.execute(insert(facets), rows)
            if event == ADDED and await _kept(connection, agent.url):
                return  # another add of this card got in first, and logged it added
            await _log(connection, agent, event, detail, stored, now)

    async def mark(self, agent: AgentRecord, event: str, detail: str) -> None:
        """Record `agent`'s status, failures and validators (its card unchanged), logging
        `event` when one is given (the status changed), in one transaction."""
        now = datetime.now(UTC)
        values = {
            "status": agent.status,
            "failures": agent.failures,
            "etag": agent.etag,
            "last_modified": agent.last_modified,
            "checked_at": now,
        }
        async with self.database.writing() as connection:
            await connection.execute(update(agents).where(agents.c.url == agent.url).values(values))
            if event:
                await _log(connection, agent, event, detail, None, now)

    async def note(self, agent: AgentRecord, event: str, detail: str) -> None:
        """Log `event` (a card refused on a check, say) in `agent`'s history, nothing else."""
        async with self.database.writing() as connection:
            await _log(connection, agent, event, detail, None, datetime.now(UTC))

    async def remove(self, url: str) -> AgentRecord | None:
        """Forget the agent added by `url` (its history keeps a `removed` entry); the agent
        as it was, or None when it was not kept."""
        found = await self.get(url)
        if found is None:
            return None
        async with self.database.writing() as connection:
            await connection.execute(delete(facets).where(facets.c.url == url))
            await connection.execute(delete(agents).where(agents.c.url == url))
            await _log(connection, found, REMOVED, "removed by a curator", None, datetime.now(UTC))
        return found

    async def history(self, url: str, limit: int = 100) -> list[Change]:
        """The latest `limit` entries of the history of the agent added by `url`, newest first."""
        statement = (
            select(history).where(history.c.url == url).order_by(history.c.id.desc()).limit(limit)
        )
        async with self.database.reading() as connection:
            rows = await connection.execute(statement)
        return [Change(r.url, r.at, r.event, r.revision, r.detail, card_json(r.card)) for r in rows]

    async def search(self, query: SearchQuery) -> SearchPage:
        """One page of the agents `query` finds, best first."""
        page, count = search_statement(query, self.database.dialect)
        async with self.database.reading() as connection:
            rows = (await connection.execute(page)).all()
            total = (await connection.execute(count)).scalar_one()
        found = [_record(row._mapping) for row in rows]
        following = query.offset + len(found)
        next_offset = following if following < total else None
        return SearchPage(found, total, next_offset, query.to_json())


def open_catalog(url: str = DEFAULT_CATALOG_URL, *, pool_size: int | None = None) -> CardCatalog:
    """The catalog at `url` (`sqlite:///PATH`, `postgresql://...`: the URLs of `accord serve
    --store`), not yet opened."""
    return CardCatalog(CatalogDatabase(create_sql_engine(url, pool_size=pool_size)))


async def _log(
    connection: AsyncConnection,
    agent: AgentRecord,
    event: str,
    detail: str,
    card: str | None,
    at: datetime,
) -> None:
    row = {
        "url": agent.url,
        "at": at,
        "event": event,
        "revision": agent.revision,
        "detail": detail,
        "card": card,
    }
    await connection.execute(insert(history).values(row))


async def _kept(connection: AsyncConnection, url: str) -> bool:
    """Whether the agent at `url` was added already (in a transaction that committed before
    this one wrote its row: the history it logged is seen), and not removed since."""
    latest = select(history.c.event).where(history.c.url == url).order_by(history.c.id.desc())
    event = (await connection.execute(latest.limit(1))).scalar()
    return event is not None and event != REMOVED


def _record(row: Any) -> AgentRecord:
    document = card_json(row["card"])
    assert document is not None
    rank = row.get("rank")
    return AgentRecord(
        url=row["url"],
        document=document,
        status=row["status"],
        etag=row["etag"],
        last_modified=row["last_modified"],
        signed_by=row["signed_by"],
        revision=row["revision"],
        failures=row["failures"],
        added_at=row["added_at"],
        changed_at=row["changed_at"],
        checked_at=row["checked_at"],
        rank=-float(rank) if rank is not None else None,
    )
