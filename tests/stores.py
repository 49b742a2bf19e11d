"""Fresh task stores for tests: memory, SQLite (a temporary file) and PostgreSQL (a new schema).

Test modules import the fixtures `backend`, `sql_backend` and `store` from here (as
`backend_fixture`, ...: the name a test asks for stays free for its parameter). PostgreSQL
comes from ACCORD_TEST_PG_URL; each test gets a schema of its own, dropped afterwards
(`pg_schema_url` names one for a server process). When
PostgreSQL is not reachable its tests skip, or fail under ACCORD_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import make_url, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from accord.store import InMemoryTaskStore, Retention, TaskStore
from accord.store.sql import SqlTaskStore, create_sql_engine
from accord.types import new_id
from services import PG_URL, unavailable

BACKENDS = ("memory", "sqlite", "postgresql")
SQL_BACKENDS = ("sqlite", "postgresql")


class Backend:
    """Where one test's data lives; every store it opens shares that data.

    The memory backend has one store (its data lives in it); the SQL backends open a new
    store, with an engine of its own, on the same database each time.
    """

    def __init__(self, name: str, url: str = "", **engine_options: Any) -> None:
        self.name = name
        self.url = url
        self._engine_options = engine_options
        self._stores: list[TaskStore] = []

    async def open(self, retention: Retention | None = None) -> TaskStore:
        """A store on this backend's data, opened (its schema created if need be)."""
        store: TaskStore
        if self.name == "memory":
            if self._stores:
                return self._stores[0]
            store = InMemoryTaskStore(retention)
        else:
            store = SqlTaskStore(self.engine(), retention=retention)
        await store.open()
        self._stores.append(store)
        return store

    def engine(self) -> AsyncEngine:
        """A new engine on this backend's database (SQL backends only)."""
        return create_sql_engine(self.url, **self._engine_options)

    async def close(self) -> None:
        for store in self._stores:
            await store.close()


@asynccontextmanager
async def open_backend(name: str, tmp_path: Path) -> AsyncIterator[Backend]:
    """A backend with no data in it yet, cleaned up afterwards."""
    if name == "postgresql":
        async with fresh_pg_schema() as schema:
            settings = {"search_path": schema}
            backend = Backend(name, PG_URL, connect_args={"server_settings": settings})
            try:
                yield backend
            finally:
                await backend.close()
        return
    backend = Backend(name, f"sqlite:///{tmp_path / 'accord.db'}" if name == "sqlite" else "")
    try:
        yield backend
    finally:
        await backend.close()


@asynccontextmanager
async def fresh_pg_schema() -> AsyncIterator[str]:
    """A new, empty PostgreSQL schema, dropped with all it holds afterwards."""
    admin = create_sql_engine(PG_URL)
    schema = f"accord_test_{new_id().replace('-', '')}"
    try:
        async with admin.begin() as connection:
            await connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    except (OSError, SQLAlchemyError) as exc:
        await admin.dispose()
        unavailable("PostgreSQL", exc)
    try:
        yield schema
    finally:
        async with admin.begin() as connection:
            await connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


def pg_schema_url(schema: str) -> str:
    """The test database's URL with `schema` as the one to use, as `accord serve` takes it."""
    url = make_url(PG_URL).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


@pytest.fixture(name="backend", params=BACKENDS)
async def backend_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """Each backend in turn, empty."""
    async with open_backend(request.param, tmp_path) as opened:
        yield opened


@pytest.fixture(name="sql_backend", params=SQL_BACKENDS)
async def sql_backend_fixture(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Backend]:
    """Each SQL backend in turn, empty."""
    async with open_backend(request.param, tmp_path) as opened:
        yield opened


@pytest.fixture(name="store")
async def store_fixture(backend: Backend) -> TaskStore:
    """An opened store on each backend in turn, with the default retention."""
    return await backend.open()
