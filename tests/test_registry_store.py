"""The registry's catalog as a database: its own versioned schema, beside a task store, and
the periodic checks that keep its cards current (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import text

from accord.registry import Registry, open_catalog
from accord.registry.catalog import CatalogDatabase
from accord.samples import currency
from accord.store.sql import SqlTaskStore, create_sql_engine
from accord.store.sql.migrations import UpgradeResult
from live_server import serve_app
from registry_cards import Swappable, catalog_url, registry_fixture, with_a_skill  # noqa: F401
from stores import SQL_BACKENDS


@pytest.mark.parametrize("backend", SQL_BACKENDS)
async def test_the_schema_is_versioned_and_shares_a_database_with_a_task_store(
    backend: str, tmp_path: Path
) -> None:
    async with catalog_url(backend, tmp_path) as url:
        database = CatalogDatabase(create_sql_engine(url))
        tasks = SqlTaskStore(create_sql_engine(url))
        try:
            assert await database.upgrade() == UpgradeResult(0, 1)
            assert await database.upgrade() == UpgradeResult(1, 1)
            await tasks.open()  # the task store's own schema, in the same database
            async with database.reading() as connection:
                versions = await connection.execute(
                    text("SELECT version, description FROM accord_registry_schema_version")
                )
                assert [tuple(row) for row in versions] == [(1, "agents, facets, history, search")]
        finally:
            await tasks.close()
            await database.close()


async def test_periodic_checks_pick_up_a_changed_card(registry: Registry) -> None:
    agent = Swappable(currency.agent.app())
    with serve_app(agent) as url:
        added = await registry.add(url)
        registry.check_interval = 0.05
        checking = asyncio.create_task(registry.run_checks())
        try:
            agent.current = with_a_skill(currency.agent).app()
            for _ in range(600):  # until a check has seen it (a bound, not a timing claim)
                kept = await registry.catalog.get(added.url)
                if kept is not None and kept.revision == 2:
                    break
                await asyncio.sleep(0.05)
        finally:
            checking.cancel()
    assert kept is not None and kept.revision == 2


async def test_a_catalog_url_that_is_no_database_is_refused() -> None:
    with pytest.raises(ValueError, match="in-memory SQLite"):
        open_catalog("sqlite://")
    with pytest.raises(ValueError, match="unsupported database URL"):
        open_catalog("redis://localhost")
