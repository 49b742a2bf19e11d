"""The SQL stores' connection pools: sized for a fleet, settable, and checked against the server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from accord.store import open_store
from accord.store.pools import POSTGRES_POOL_SIZE
from accord.store.sql import SqlTaskStore, create_sql_engine
from accord.store.sql.pool_fit import pool_fit
from served_process import accord_serve
from services import PG_URL
from stores import fresh_pg_schema, open_backend, pg_schema_url


async def test_a_postgresql_pool_is_a_fleets_share_of_the_server() -> None:
    engine = create_sql_engine(PG_URL)
    sized = create_sql_engine(PG_URL, pool_size=7)
    try:
        assert engine.sync_engine.pool.size() == POSTGRES_POOL_SIZE  # type: ignore[attr-defined]
        assert sized.sync_engine.pool.size() == 7  # type: ignore[attr-defined]
        async with engine.connect() as connection:
            limit = int(await connection.scalar(text("SHOW max_connections")))
        assert limit - 3 >= 4 * POSTGRES_POOL_SIZE  # four replicas fit the default server
    finally:
        await engine.dispose()
        await sized.dispose()


def test_only_a_sql_store_takes_a_pool_size(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/accord.db", pool_size=3)
    assert isinstance(store, SqlTaskStore)
    assert store.engine.sync_engine.pool.size() == 3  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="pool is for SQL stores"):
        open_store("memory", pool_size=3)
    with pytest.raises(ValueError, match="at least"):
        create_sql_engine(f"sqlite:///{tmp_path}/accord.db", pool_size=0)


async def test_pools_that_do_not_fit_the_server_are_told_apart(tmp_path: Path) -> None:
    async with open_backend("postgresql", tmp_path) as backend:
        store = await backend.open()
        assert isinstance(store, SqlTaskStore)
        small = await pool_fit(store.engine, 1)
        assert small is not None and small.fits and small.replicas == 1
        await store.heartbeat("another-replica", datetime.now(UTC) + timedelta(minutes=1))
        limit = small.available
        half = await pool_fit(store.engine, limit // 2 + 1)  # fits one replica, not two
        assert half is not None and half.replicas == 2 and not half.fits
        assert half.warning().startswith(f"2 replicas x a pool of {limit // 2 + 1} may open")
        assert f"more than the {limit} PostgreSQL allows" in half.warning()
    sqlite_store = SqlTaskStore(create_sql_engine(f"sqlite:///{tmp_path}/accord.db"))
    try:
        assert await pool_fit(sqlite_store.engine, 10_000) is None
    finally:
        await sqlite_store.close()


ECHO = "accord.samples.echo:agent"


@pytest.mark.processes
async def test_accord_serve_says_when_its_pool_cannot_fit_the_server() -> None:
    async with fresh_pg_schema() as schema:
        store = ("--store", pg_schema_url(schema))
        with accord_serve(ECHO, *store, "--store-pool", "5000") as big:
            pass
        with accord_serve(ECHO, *store, "--store-pool", "5") as small:
            pass
    assert "accord: warning: a pool of 5000 may open 5000 connections, more than" in big.output
    assert "warning" not in small.output
