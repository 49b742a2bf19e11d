"""SqlDatabase: the engine a SQL store reads and writes through, its schema brought up first."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from accord.store.sql.engine import writer
from accord.store.sql.migrations import UpgradeResult, upgrade

_INSERTS = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}


class SqlDatabase:
    """SQLite (aiosqlite) or PostgreSQL (asyncpg): connections to read on and transactions to
    write in, each once the schema is created or upgraded (`open`)."""

    def __init__(self, engine: AsyncEngine) -> None:
        if engine.dialect.name not in _INSERTS:
            raise ValueError(f"SqlTaskStore supports SQLite and PostgreSQL, not {engine.url}")
        self.engine = engine
        self.dialect: str = engine.dialect.name
        self._writer = writer(engine)
        self._opened = False
        self._opening = asyncio.Lock()
        # SQLite has one writer at a time: this process's writers queue here rather than in
        # SQLite's busy handler, which polls with sleeps. Other processes still meet the latter.
        self.one_writer = asyncio.Lock() if self.dialect == "sqlite" else None

    @property
    def opened(self) -> bool:
        """Whether the schema is up to date already (nothing to await before a write)."""
        return self._opened

    async def open(self) -> None:
        """Create or upgrade the schema once; idempotent."""
        if self._opened:
            return
        async with self._opening:
            if not self._opened:
                await self.upgrade()
                self._opened = True

    async def upgrade(self) -> UpgradeResult:
        """Create or upgrade the schema (see `accord.store.sql.migrations`)."""
        return await upgrade(self.engine)

    async def close(self) -> None:
        """Dispose of the engine; the next use opens it again."""
        await self.engine.dispose()
        self._opened = False

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[AsyncConnection]:
        """A connection to read on."""
        await self.open()
        async with self.engine.connect() as connection:
            yield connection

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[AsyncConnection]:
        """A connection in a transaction, committed on leaving (SQLite: this process's one
        writer)."""
        await self.open()
        async with self.one_writer or nullcontext(), self._writer.begin() as connection:
            yield connection

    def insert(self, table: Table) -> Any:
        """INSERT in this dialect, with its ON CONFLICT clauses (the same on both backends)."""
        return _INSERTS[self.dialect](table)
