"""What only the SQL store has: URLs, migrations, indexes, SQLite tuning, data that outlives it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Connection, insert, inspect, text

from accord.runtime.push import TASK_SNAPSHOTS
from accord.store import InMemoryTaskStore, open_store
from accord.store.sql import SchemaVersionError, SqlTaskStore, sql_url, upgrade
from accord.store.sql.migrations import (
    BASELINE_VERSION,
    MIGRATIONS,
    Migration,
    UpgradeResult,
    head_version,
)
from accord.store.sql.schema import metadata, push_configs, schema_version, tasks
from accord.types import Task, TaskState, TaskStatus
from services import PG_URL
from stores import (  # noqa: F401 - fixtures
    Backend,
    fresh_pg_schema,
    pg_schema_url,
    sql_backend_fixture,
)


def add_note_column(connection: Connection) -> None:
    connection.execute(text("ALTER TABLE accord_replicas ADD COLUMN note VARCHAR(40)"))


HEAD = head_version()
NEXT_STEP = Migration(HEAD + 1, "replicas get a note", add_note_column)
WITH_NEXT_STEP = [*MIGRATIONS, NEXT_STEP]


# --- URLs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///.accord/accord.db", "sqlite+aiosqlite:///.accord/accord.db"),
        ("sqlite:////var/lib/accord.db", "sqlite+aiosqlite:////var/lib/accord.db"),
        ("sqlite+aiosqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("postgresql://u@db:5432/accord", "postgresql+asyncpg://u@db:5432/accord"),
        ("postgres://u@db/accord", "postgresql+asyncpg://u@db/accord"),
        ("postgresql+asyncpg://u@db/accord", "postgresql+asyncpg://u@db/accord"),
        (
            "postgresql://u@db/accord?sslmode=require",
            "postgresql+asyncpg://u@db/accord?ssl=require",
        ),
    ],
)
def test_store_urls_select_the_async_drivers(url: str, expected: str) -> None:
    assert sql_url(url).render_as_string() == expected


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("sqlite://", "in-memory SQLite"),
        ("sqlite:///:memory:", "in-memory SQLite"),
        ("mysql://u@db/accord", "unsupported database URL"),
        ("postgresql+psycopg://u@db/accord", "unsupported database URL"),
        ("not a url", "is not a database URL"),
        ("postgresql://u@db/accord?options=-X", "unsupported PostgreSQL options"),
        ("postgresql://u@db/accord?options=-csearch_path%3Da+-d", "unsupported PostgreSQL options"),
    ],
)
def test_other_urls_are_refused_with_a_reason(url: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        open_store(url)


async def test_open_store_picks_the_backend_and_makes_the_sqlite_folder(tmp_path: Path) -> None:
    assert isinstance(open_store("memory"), InMemoryTaskStore)
    store = open_store(f"sqlite:///{tmp_path}/new/folder/accord.db")
    try:
        assert isinstance(store, SqlTaskStore)
        assert (tmp_path / "new" / "folder").is_dir()
    finally:
        await store.close()


async def test_a_postgresql_url_can_name_the_schema_to_use() -> None:
    async with fresh_pg_schema() as schema:
        options = f"?options=-c%20search_path%3D{schema}%20--application_name%3Daccord-test"
        store = open_store(pg_schema_url(schema))
        spelled_out = open_store(PG_URL + options)
        assert isinstance(store, SqlTaskStore) and isinstance(spelled_out, SqlTaskStore)
        try:
            await store.open()  # creates its tables in the schema
            async with spelled_out.engine.connect() as connection:
                in_schema = await connection.scalar(
                    text("SELECT count(*) FROM information_schema.tables WHERE table_schema = :s"),
                    {"s": schema},
                )
                settings = await connection.execute(
                    text("SELECT current_schema(), current_setting('application_name')")
                )
                assert settings.one() == (schema, "accord-test")
        finally:
            await store.close()
            await spelled_out.close()

    assert in_schema


# --- migrations -----------------------------------------------------------------------------


async def test_migrations_create_the_schema_once(sql_backend: Backend) -> None:
    engine = sql_backend.engine()
    try:
        first = await upgrade(engine)
        again = await upgrade(engine)
        async with engine.connect() as connection:
            tables = await connection.run_sync(lambda c: set(inspect(c).get_table_names()))
            versions = await connection.execute(text("SELECT version FROM accord_schema_version"))
            recorded = [row.version for row in versions]
    finally:
        await engine.dispose()

    assert first == UpgradeResult(0, HEAD)
    assert again == UpgradeResult(HEAD, HEAD)
    assert not again.changed
    assert tables == set(metadata.tables)
    assert recorded == [HEAD]  # a fresh database gets the newest schema at once


async def test_a_new_step_runs_once_on_an_existing_database(sql_backend: Backend) -> None:
    engine = sql_backend.engine()
    try:
        await upgrade(engine)
        stepped = await upgrade(engine, WITH_NEXT_STEP)
        again = await upgrade(engine, WITH_NEXT_STEP)
        async with engine.connect() as connection:
            columns = await connection.run_sync(
                lambda c: {column["name"] for column in inspect(c).get_columns("accord_replicas")}
            )
    finally:
        await engine.dispose()

    assert stepped == UpgradeResult(HEAD, NEXT_STEP.version)
    assert again == UpgradeResult(NEXT_STEP.version, NEXT_STEP.version)
    assert "note" in columns


async def test_a_database_from_a_newer_accord_is_refused(sql_backend: Backend) -> None:
    engine = sql_backend.engine()
    try:
        await upgrade(engine, WITH_NEXT_STEP)
        with pytest.raises(SchemaVersionError, match="newer than this accord knows"):
            await upgrade(engine)
    finally:
        await engine.dispose()


async def test_migration_steps_must_be_numbered_in_order(sql_backend: Backend) -> None:
    engine = sql_backend.engine()
    skipping = Migration(BASELINE_VERSION + 2, "skips a version", add_note_column)
    try:
        with pytest.raises(ValueError, match="migration versions"):
            await upgrade(engine, [skipping])
    finally:
        await engine.dispose()


async def test_stores_starting_together_create_the_schema_once(sql_backend: Backend) -> None:
    engines = [sql_backend.engine() for _ in range(4)]
    try:
        results = await asyncio.gather(*(upgrade(engine) for engine in engines))
    finally:
        for engine in engines:
            await engine.dispose()

    assert sorted(result.before for result in results) == [0] + [HEAD] * 3


NOW = datetime.now(UTC)
OLD_CONFIG = '{"url": "https://old/hook", "id": "c"}'


async def test_push_configs_of_a_version_1_database_get_the_task_payload_format(
    sql_backend: Backend,
) -> None:
    engine = sql_backend.engine()
    try:
        async with engine.begin() as connection:  # what accord made at schema version 1
            await connection.run_sync(metadata.create_all)
            await connection.execute(text(f"ALTER TABLE {push_configs} DROP COLUMN payload_format"))
            baseline = {"version": BASELINE_VERSION, "description": "baseline", "applied_at": NOW}
            await connection.execute(insert(schema_version).values(baseline))
            await connection.execute(
                insert(push_configs).values(task_id="t", config_id="c", config=OLD_CONFIG)
            )
        upgraded = await upgrade(engine)
    finally:
        await engine.dispose()
    store = await sql_backend.open()
    kept = await store.get_push_config("t", "c")

    assert upgraded == UpgradeResult(BASELINE_VERSION, HEAD)
    assert kept is not None
    assert (kept.config.url, kept.payload_format) == ("https://old/hook", TASK_SNAPSHOTS)


async def test_listing_has_an_index_for_each_filter(sql_backend: Backend) -> None:
    store = await sql_backend.open()
    assert isinstance(store, SqlTaskStore)
    async with store.engine.connect() as connection:
        indexes = await connection.run_sync(lambda c: inspect(c).get_indexes(tasks.name))

    leading = {tuple(index["column_names"][:2]) for index in indexes}
    assert {("updated_at", "id"), ("context_id", "updated_at"), ("state", "updated_at")} <= leading


# --- SQLite ---------------------------------------------------------------------------------


async def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/accord.db")
    assert isinstance(store, SqlTaskStore)
    try:
        async with store.engine.connect() as connection:
            journal = await connection.scalar(text("PRAGMA journal_mode"))
            timeout = await connection.scalar(text("PRAGMA busy_timeout"))
    finally:
        await store.close()

    assert journal == "wal"
    assert timeout and timeout >= 1000


async def test_tasks_outlive_the_store_that_saved_them(sql_backend: Backend) -> None:
    task = Task(id="kept", context_id="c", status=TaskStatus(state=TaskState.INPUT_REQUIRED))
    first = await sql_backend.open()
    await first.save(task, 1)
    await first.close()

    second = await sql_backend.open()
    stored = await second.get("kept")

    assert stored is not None
    assert (stored.seq, stored.task.to_json()) == (1, task.to_json())
