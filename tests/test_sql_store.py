"""What only the SQL store has: URLs, migrations, indexes, SQLite tuning, data that outlives it."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Connection, event, func, insert, inspect, select, text
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

import accord
from accord.core import ANONYMOUS_OWNER
from accord.core.call_context import CallContext
from accord.core.push import TASK_SNAPSHOTS
from accord.core.records import EventRecord
from accord.runtime import TaskRuntime
from accord.runtime.state_machine import TaskChange, apply_event, new_task
from accord.server.service import A2AService
from accord.store import (
    InMemoryTaskStore,
    StaleTaskError,
    StoreOfAnotherAgent,
    TaskQuery,
    TaskStore,
    open_store,
)
from accord.store.sql import SchemaVersionError, SqlTaskStore, create_sql_engine, sql_url, upgrade
from accord.store.sql.batches import TRIM_SWEEP, trim
from accord.store.sql.migrations import (
    BASELINE_VERSION,
    MIGRATIONS,
    Migration,
    UpgradeResult,
    head_version,
)
from accord.store.sql.rows import pack_events, unpack_events
from accord.store.sql.schema import (
    metadata,
    push_configs,
    push_deliveries,
    schema_version,
    store_agent,
    task_events,
    task_runners,
    task_snapshots,
    tasks,
)
from accord.store.sql.sqlite_writer import THREAD_NAME, SqliteBatchWriter, utc_text
from accord.types import (
    Artifact,
    Message,
    MessageSendParams,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    new_id,
)
from services import PG_URL
from stores import (  # noqa: F401 - fixtures
    Backend,
    fresh_pg_schema,
    pg_schema_url,
    sql_backend_fixture,
)
from task_streams import Stream


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


async def create_version_9(connection: AsyncConnection) -> None:
    """The tables as accord made them at schema version 9: deliveries without their trace."""
    await connection.run_sync(metadata.create_all)
    for column in ("traceparent", "tracestate"):
        await connection.execute(text(f"ALTER TABLE {push_deliveries} DROP COLUMN {column}"))


async def create_version_8(connection: AsyncConnection) -> None:
    """The tables as accord made them at schema versions 7 and 8: tasks without epochs."""
    await create_version_9(connection)
    await connection.execute(text(f"ALTER TABLE {tasks} DROP COLUMN epoch"))


async def create_version_6(connection: AsyncConnection) -> None:
    """The tables as accord made them at schema version 6: no record of the store's agent."""
    await create_version_8(connection)
    await connection.execute(text(f"DROP TABLE {store_agent}"))


async def create_version_5(connection: AsyncConnection) -> None:
    """The tables as accord made them at schema version 5: one event in each log row."""
    await create_version_6(connection)
    await connection.execute(text(f"ALTER TABLE {task_events} DROP COLUMN first_seq"))


async def create_version_3(connection: AsyncConnection) -> None:
    """The tables as accord made them at schema version 3: tasks without owners, no outbox."""
    await create_version_5(connection)
    await connection.execute(text(f"DROP TABLE {push_deliveries}"))
    await connection.execute(text("DROP INDEX ix_accord_tasks_owner_listing"))
    await connection.execute(text(f"ALTER TABLE {tasks} DROP COLUMN owner"))


async def create_version_2(connection: AsyncConnection) -> None:
    """The tables as accord made them at schema version 2: a task's JSON in its row."""
    await create_version_3(connection)
    await connection.execute(text(f"DROP TABLE {task_snapshots}"))
    await connection.execute(text(f"ALTER TABLE {tasks} ADD COLUMN task TEXT"))
    await connection.execute(text(f"ALTER TABLE {tasks} DROP COLUMN snapshot_seq"))


def old_working_task() -> tuple[Task, dict[str, Any]]:
    """A working task at event 2, and its row as older schemas held it (without a JSON)."""
    task = Task(
        id="old",
        context_id="ctx",
        status=TaskStatus(state=TaskState.WORKING, timestamp="2024-05-01T12:00:00.000Z"),
    )
    row = {"id": task.id, "context_id": "ctx", "state": "working", "updated_at": NOW, "seq": 2}
    return task, row | {"created_at": NOW, "finished_at": None}


async def test_the_log_of_a_version_5_database_replays_beside_rows_of_several_events(
    sql_backend: Backend,
) -> None:
    task, row = old_working_task()
    working = TaskStatusUpdateEvent(
        task_id="old", context_id="ctx", status=task.status, final=False
    )
    engine = sql_backend.engine()
    try:
        async with engine.begin() as connection:  # what accord made at schema version 5
            await create_version_5(connection)
            for version in range(1, 6):
                step = {"version": version, "description": "old", "applied_at": NOW}
                await connection.execute(insert(schema_version).values(step))
            await connection.execute(insert(tasks).values(row))
            json = task.to_json().decode()
            await connection.execute(insert(task_snapshots).values(task_id=task.id, task=json))
            for seq, event in enumerate((task, working), start=1):
                logged = {"task_id": task.id, "seq": seq, "final": False, "created_at": NOW}
                logged["payload"] = event.to_json()
                await connection.execute(insert(task_events).values(logged))
        upgraded = await upgrade(engine)
    finally:
        await engine.dispose()
    store = await sql_backend.open()
    old_payloads = [task.to_json(), working.to_json()]
    stream = Stream(store, task, seq=2)

    await stream.chunks_together(3)
    await stream.read_back()
    assert upgraded == UpgradeResult(5, HEAD)
    logged = await store.events_after(task.id, 0)
    assert [r.seq for r in logged] == [1, 2, 3, 4, 5]
    assert [r.payload for r in logged[:2]] == old_payloads
    assert [r.seq for r in await store.events_after(task.id, 1, limit=2)] == [2, 3]


async def upgrade_a_version_6_database(sql_backend: Backend) -> tuple[Task, UpgradeResult]:
    """A database as accord made it at schema version 6, holding `old_working_task`, upgraded."""
    task, row = old_working_task()
    engine = sql_backend.engine()
    try:
        async with engine.begin() as connection:
            await create_version_6(connection)
            for version in range(1, 7):
                step = {"version": version, "description": "old", "applied_at": NOW}
                await connection.execute(insert(schema_version).values(step))
            await connection.execute(insert(tasks).values(row))
            json = task.to_json().decode()
            await connection.execute(insert(task_snapshots).values(task_id=task.id, task=json))
        return task, await upgrade(engine)
    finally:
        await engine.dispose()


async def test_a_version_6_database_is_bound_to_the_first_agent_that_opens_it(
    sql_backend: Backend,
) -> None:
    task, upgraded = await upgrade_a_version_6_database(sql_backend)
    store = await sql_backend.open()

    await store.bind_agent("Movies")
    kept = await store.get(task.id)
    with pytest.raises(StoreOfAnotherAgent):
        await (await sql_backend.open()).bind_agent("Currency Agent")
    assert upgraded == UpgradeResult(6, HEAD)
    assert kept is not None and kept.task.id == task.id


async def test_the_tasks_of_a_version_6_database_start_at_epoch_0(sql_backend: Backend) -> None:
    task, upgraded = await upgrade_a_version_6_database(sql_backend)
    store = await sql_backend.open()
    stored = await store.get(task.id)
    claimed = await store.claim(task.id, "replica-1")

    assert upgraded == UpgradeResult(6, HEAD)
    assert stored is not None and (stored.seq, stored.epoch) == (2, 0)
    assert claimed is not None and (claimed.seq, claimed.epoch) == (2, 1)


OLD_CONFIG = '{"url": "https://old/hook", "id": "c"}'


async def test_push_configs_of_a_version_1_database_get_the_task_payload_format(
    sql_backend: Backend,
) -> None:
    engine = sql_backend.engine()
    try:
        async with engine.begin() as connection:  # what accord made at schema version 1
            await create_version_2(connection)
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


async def test_tasks_of_a_version_2_database_read_back_and_stream_on(
    sql_backend: Backend,
) -> None:
    task, row = old_working_task()
    engine = sql_backend.engine()
    try:
        async with engine.begin() as connection:  # what accord made at schema version 2
            await create_version_2(connection)
            for version in (1, 2):
                step = {"version": version, "description": "old", "applied_at": NOW}
                await connection.execute(insert(schema_version).values(step))
            await connection.execute(insert(tasks).values(row))
            json = {"id": task.id, "task": task.to_json().decode()}
            await connection.execute(text(f"UPDATE {tasks} SET task = :task WHERE id = :id"), json)
        upgraded = await upgrade(engine)
    finally:
        await engine.dispose()
    store = await sql_backend.open()
    stream = Stream(store, task, seq=2)

    await stream.read_back()
    await stream.chunks(300)
    await stream.read_back()
    assert upgraded == UpgradeResult(2, HEAD)


async def test_tasks_of_a_version_3_database_become_the_anonymous_owners(
    sql_backend: Backend,
) -> None:
    task = Task(id="old", context_id="ctx", status=TaskStatus(state=TaskState.WORKING))
    row = {"id": task.id, "context_id": "ctx", "state": "working", "updated_at": NOW, "seq": 1}
    row |= {"created_at": NOW, "finished_at": None}
    engine = sql_backend.engine()
    try:
        async with engine.begin() as connection:  # what accord made at schema version 3
            await create_version_3(connection)
            for version in (1, 2, 3):
                step = {"version": version, "description": "old", "applied_at": NOW}
                await connection.execute(insert(schema_version).values(step))
            await connection.execute(insert(tasks).values(row))
            snapshot = {"task_id": task.id, "task": task.to_json().decode()}
            await connection.execute(insert(task_snapshots).values(snapshot))
        upgraded = await upgrade(engine)
    finally:
        await engine.dispose()
    store = await sql_backend.open()

    assert upgraded == UpgradeResult(3, HEAD)
    stored = await store.get(task.id, ANONYMOUS_OWNER)
    assert stored is not None and stored.owner == ANONYMOUS_OWNER
    assert await store.get(task.id, "alice") is None
    listed = await store.list_tasks(TaskQuery(owner=ANONYMOUS_OWNER))
    assert [t.id for t in listed.tasks] == [task.id]
    assert (await store.list_tasks(TaskQuery(owner="alice"))).total_size == 0


async def test_listing_one_owners_tasks_uses_an_index(sql_backend: Backend) -> None:
    store = await sql_backend.open()
    assert isinstance(store, SqlTaskStore)
    query = "SELECT id FROM accord_tasks WHERE owner = 'alice' ORDER BY updated_at DESC, id DESC"
    explain = "EXPLAIN QUERY PLAN " if sql_backend.name == "sqlite" else "EXPLAIN "
    async with store.engine.connect() as connection:
        if sql_backend.name == "postgresql":
            await connection.execute(text("SET enable_seqscan = off"))
        plan = " ".join(str(row) for row in await connection.execute(text(explain + query)))

    assert "ix_accord_tasks_owner_listing" in plan


@accord.agent(name="Tokens", description="Streams COUNT chunks of eight bytes.")
async def tokens(context: accord.RequestContext) -> AsyncIterator[str]:
    for n in range(int(context.text)):
        yield f"{n:08d}"


async def test_saves_staged_before_the_store_opened_commit_in_order(sql_backend: Backend) -> None:
    store = SqlTaskStore(sql_backend.engine())  # not opened: the first save opens it
    task = Task(id=new_id(), context_id="ctx", status=TaskStatus(state=TaskState.SUBMITTED))
    try:
        staged = [store.stage(task, 1, EventRecord.of(task.id, 1, task, final=False))]
        for seq, state in ((2, TaskState.WORKING), (3, TaskState.COMPLETED)):
            task.status = TaskStatus(state=state)
            staged.append(store.stage(task, seq, EventRecord.of(task.id, seq, task, final=False)))
        await asyncio.gather(*staged)
        stored = await store.get(task.id)
        logged = await store.events_after(task.id, 0)
    finally:
        await store.close()

    assert stored is not None and (stored.seq, stored.task.to_json()) == (3, task.to_json())
    assert [json.loads(r.payload)["status"]["state"] for r in logged] == [
        "submitted",
        "working",
        "completed",
    ]


class Triggers:
    """Statements that install triggers on a store's database: `SQLITE` or `POSTGRESQL`."""

    SQLITE: tuple[str, ...] = ()
    POSTGRESQL: tuple[str, ...] = ()

    def __init__(self, store: SqlTaskStore) -> None:
        self.engine = store.engine

    async def install(self) -> None:
        statements = self.SQLITE if self.engine.dialect.name == "sqlite" else self.POSTGRESQL
        async with self.engine.begin() as connection:
            for statement in statements:
                await connection.execute(text(statement))


class TaskJsonWrites(Triggers):
    """Counts the bytes of task JSON the database is asked to write (a trigger on the column)."""

    SQLITE = (
        "CREATE TABLE json_writes (bytes BIGINT NOT NULL)",
        f"""CREATE TRIGGER count_inserted AFTER INSERT ON {task_snapshots}
            BEGIN INSERT INTO json_writes VALUES (length(NEW.task)); END""",
        f"""CREATE TRIGGER count_updated AFTER UPDATE OF task ON {task_snapshots}
            BEGIN INSERT INTO json_writes VALUES (length(NEW.task)); END""",
    )
    POSTGRESQL = (
        "CREATE TABLE json_writes (bytes BIGINT NOT NULL)",
        """CREATE FUNCTION count_json() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN INSERT INTO json_writes VALUES (octet_length(NEW.task)); RETURN NULL; END $$""",
        f"""CREATE TRIGGER count_written AFTER INSERT OR UPDATE OF task ON {task_snapshots}
            FOR EACH ROW EXECUTE FUNCTION count_json()""",
    )

    async def totals(self) -> tuple[int, int]:
        """(times the task's JSON was written, its bytes in all)."""
        async with self.engine.connect() as connection:
            result = await connection.execute(text("SELECT count(*), sum(bytes) FROM json_writes"))
            count, total = result.one()
        return count, total


async def test_an_appended_chunk_does_not_write_the_task_again(sql_backend: Backend) -> None:
    store = await sql_backend.open()
    assert isinstance(store, SqlTaskStore)
    writes = TaskJsonWrites(store)
    await writes.install()
    service = A2AService(tokens, TaskRuntime(tokens.executor, store=store))
    message = Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text="2000")])

    result = await service.send_message(
        MessageSendParams(message=message), CallContext(base_url="http://127.0.0.1/")
    )

    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
    stored = await store.get(result.id)
    assert stored is not None and stored.task.to_json() == result.to_json()
    async with store.engine.connect() as connection:
        logged = await connection.scalar(select(func.sum(func.length(task_events.c.payload))))
    times, total = await writes.totals()
    # The whole task each time, as before, would be 2,000 times and about 66 MB.
    assert times < 20, f"the task's JSON was written {times} times for 2,004 events"
    assert total < 2 * logged, f"{total} bytes of task JSON for {logged} bytes of events"


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


# --- write batches --------------------------------------------------------------------------


def working_task(task_id: str | None = None) -> Task:
    return Task(id=task_id or new_id(), context_id="c", status=TaskStatus(state=TaskState.WORKING))


def finished(task: Task, state: TaskState = TaskState.COMPLETED) -> Task:
    return task.model_copy(update={"status": TaskStatus(state=state)})


async def save_logged(store: TaskStore, task: Task, seq: int) -> None:
    await store.save(task, seq, EventRecord.of(task.id, seq, task, final=False))


async def runners(store: SqlTaskStore) -> dict[str, str]:
    async with store.engine.connect() as connection:
        rows = await connection.execute(select(task_runners))
        return {row.task_id: row.replica_id for row in rows}


async def logged_seqs(store: TaskStore, task: Task) -> list[int]:
    return [record.seq for record in await store.events_after(task.id, 0)]


async def test_a_claim_joins_the_transaction_of_the_saves_queued_with_it(
    sql_backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await sql_backend.open()
    assert isinstance(store, SqlTaskStore)
    batches: list[list[str]] = []
    if sql_backend.name == "sqlite":  # SQLite rows carry no transaction id: watch the writer
        write = SqliteBatchWriter.write

        async def watched(self: SqliteBatchWriter, batch: Any, bound: int | None) -> Any:
            batches.append([type(item).__name__ for item in batch])
            return await write(self, batch, bound)

        monkeypatch.setattr(SqliteBatchWriter, "write", watched)
    claimed, saved = working_task(), working_task()

    await asyncio.gather(store.record_runner(claimed.id, "replica-1"), save_logged(store, saved, 1))

    assert await runners(store) == {claimed.id: "replica-1"}
    if sql_backend.name == "sqlite":
        assert batches == [["RunnerClaim", "TaskSave"]]
    else:
        async with store.engine.connect() as connection:
            transactions = await connection.execute(
                text(
                    "SELECT (SELECT xmin::text FROM accord_task_runners WHERE task_id = :claimed),"
                    " (SELECT xmin::text FROM accord_tasks WHERE id = :saved)"
                ),
                {"claimed": claimed.id, "saved": saved.id},
            )
            runner_transaction, task_transaction = transactions.one()
        assert runner_transaction == task_transaction


async def test_in_a_batch_the_last_claim_or_end_of_a_task_decides_its_runner(
    sql_backend: Backend,
) -> None:
    store = await sql_backend.open()
    assert isinstance(store, SqlTaskStore)
    ended, reclaimed, handed_over, stale = (working_task() for _ in range(4))
    for task in (ended, reclaimed, handed_over, stale):
        await save_logged(store, task, 1)

    outcomes = await asyncio.gather(
        store.record_runner(ended.id, "replica-1"),
        save_logged(store, finished(ended), 2),
        save_logged(store, finished(reclaimed), 2),
        store.record_runner(reclaimed.id, "replica-2"),
        store.record_runner(handed_over.id, "replica-1"),
        store.record_runner(handed_over.id, "replica-2"),
        store.record_runner(stale.id, "replica-1"),
        save_logged(store, finished(stale), 5),
        return_exceptions=True,
    )

    assert isinstance(outcomes[7], StaleTaskError)
    assert outcomes[:7] == [None] * 7
    assert await runners(store) == {
        reclaimed.id: "replica-2",
        handed_over.id: "replica-2",
        stale.id: "replica-1",  # its end was stale: the task still runs
    }


async def test_a_stale_end_leaves_the_runner_of_its_task(sql_backend: Backend) -> None:
    store = await sql_backend.open()
    assert isinstance(store, SqlTaskStore)
    ending, lagging = working_task(), working_task()
    for task in (ending, lagging):
        await save_logged(store, task, 1)
        await store.record_runner(task.id, "replica-1")

    outcomes = await asyncio.gather(
        save_logged(store, finished(ending), 2),
        save_logged(store, finished(lagging), 3),
        return_exceptions=True,
    )

    assert outcomes[0] is None and isinstance(outcomes[1], StaleTaskError)
    assert await runners(store) == {lagging.id: "replica-1"}


async def test_in_a_batch_of_distinct_tasks_only_the_stale_saves_fail(
    sql_backend: Backend,
) -> None:
    store = await sql_backend.open()
    moving, behind, existing = working_task(), working_task(), working_task()
    for task in (moving, behind, existing):
        await save_logged(store, task, 1)
    new = working_task()

    outcomes = await asyncio.gather(
        save_logged(store, finished(moving), 2),
        save_logged(store, finished(behind), 3),
        save_logged(store, working_task(existing.id), 1),
        save_logged(store, new, 1),
        return_exceptions=True,
    )

    assert outcomes[0] is None and outcomes[3] is None
    assert isinstance(outcomes[1], StaleTaskError) and "is at event 1, not 2" in str(outcomes[1])
    assert isinstance(outcomes[2], StaleTaskError) and "is at event 1, not 0" in str(outcomes[2])
    stored = {task.id: await store.get(task.id) for task in (moving, behind, new)}
    assert {task_id: s.seq if s else None for task_id, s in stored.items()} == {
        moving.id: 2,
        behind.id: 1,
        new.id: 1,
    }
    assert [await logged_seqs(store, task) for task in (moving, behind, existing, new)] == [
        [1, 2],
        [1],
        [1],
        [1],
    ]


async def test_a_batch_holding_several_saves_of_one_task_applies_them_in_order(
    sql_backend: Backend,
) -> None:
    store = await sql_backend.open()
    task, other = working_task(), working_task()
    await save_logged(store, other, 1)

    outcomes = await asyncio.gather(
        save_logged(store, task, 1),
        save_logged(store, finished(other), 2),
        save_logged(store, working_task(task.id), 2),
        save_logged(store, finished(task), 3),
        save_logged(store, finished(task, TaskState.FAILED), 3),
        return_exceptions=True,
    )

    assert outcomes[:4] == [None] * 4
    assert isinstance(outcomes[4], StaleTaskError)
    stored = await store.get(task.id)
    assert stored is not None
    assert (stored.seq, stored.task.status.state) == (3, TaskState.COMPLETED)
    assert await logged_seqs(store, task) == [1, 2, 3]
    assert await logged_seqs(store, other) == [1, 2]


def sqlite_writer_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith(THREAD_NAME)]


async def test_sqlite_batches_and_other_writes_never_meet_in_the_busy_handler(
    tmp_path: Path,
) -> None:
    engine = create_sql_engine(f"sqlite:///{tmp_path}/accord.db")

    @event.listens_for(engine.sync_engine, "connect")
    def impatient(dbapi_connection: Any, _record: Any) -> None:
        # Registered after the store's own pragmas: a write that finds the file locked by
        # the batch writer fails at once instead of waiting for it.
        dbapi_connection.cursor().execute("PRAGMA busy_timeout=0")

    store = SqlTaskStore(engine)
    tasks_ = [working_task() for _ in range(40)]
    until = datetime.now(UTC) + timedelta(minutes=1)
    try:
        for seq in (1, 2, 3):
            await asyncio.gather(
                *(save_logged(store, task, seq) for task in tasks_),
                *(store.heartbeat(f"replica-{i}", until) for i in range(5)),
                *(store.take_over(task.id, None, "replica-0") for task in tasks_[:5]),
                store.cleanup(),
            )
        stored = [await store.get(task.id) for task in tasks_]
    finally:
        await store.close()

    assert [s.seq if s else None for s in stored] == [3] * len(tasks_)


async def test_closing_a_sqlite_store_writes_what_was_queued_and_ends_its_writer(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path}/accord.db"
    store = open_store(url)
    before = sqlite_writer_threads()
    await store.open()
    tasks_ = [working_task() for _ in range(20)]
    await save_logged(store, tasks_[0], 1)
    assert len(sqlite_writer_threads()) == len(before) + 1
    queued = [asyncio.create_task(save_logged(store, task, 1)) for task in tasks_[1:]]
    await asyncio.sleep(0)  # they are queued, not written

    await store.close()

    assert all(saving.done() and saving.exception() is None for saving in queued)
    assert sqlite_writer_threads() == before
    # SQLite removes the write-ahead log when the last connection to the file closes.
    assert not (tmp_path / "accord.db-wal").exists()
    again = open_store(url)
    try:
        assert [await again.get(task.id) is not None for task in tasks_] == [True] * 20
        await save_logged(again, finished(tasks_[0]), 2)  # a closed store's writer starts anew
    finally:
        await again.close()


# --- saves of one task queued together --------------------------------------------------------


STORY_TIME = "2026-11-24T12:00:00.000Z"


def story_of_a_task(task_id: str, chunks: int, *, ends: bool) -> list[TaskChange]:
    """What a streaming agent makes of a task: working, an artifact in `chunks` chunks (each
    after the first appended), and its end when `ends`."""

    def status(state: TaskState) -> TaskStatusUpdateEvent:
        return TaskStatusUpdateEvent(
            task_id=task_id,
            context_id="c",
            status=TaskStatus(state=state, timestamp=STORY_TIME),
            final=state.is_terminal,
        )

    def chunk(n: int) -> TaskArtifactUpdateEvent:
        artifact = Artifact(artifact_id="answer", parts=[TextPart(text=f"{n:04d}")])
        return TaskArtifactUpdateEvent(
            task_id=task_id, context_id="c", artifact=artifact, append=n > 0
        )

    story: list[TaskChange] = [status(TaskState.WORKING), *(chunk(n) for n in range(chunks))]
    return [*story, status(TaskState.COMPLETED)] if ends else story


async def tell(
    store: TaskStore,
    task_id: str,
    story: list[TaskChange],
    *,
    together: bool,
    one_save: bool = False,
) -> None:
    """Create the task, then save each change of `story`: all staged at once (`together`, as a
    run that does not wait for its saves), or each once the one before it is committed; or
    (`one_save`) all of them as one save (`stage_records`) once the story is told."""
    message = Message(message_id="go", role=Role.USER, parts=[TextPart(text="go")])
    task = new_task(task_id, "c", message)
    task.status.timestamp = STORY_TIME
    records = [EventRecord.of(task_id, 1, task, final=False)]
    staged = [] if one_save else [store.stage(task, 1, records[0])]
    for seq, change in enumerate(story, start=2):
        if staged and not together:
            await staged[-1]
        applied = apply_event(task, change)
        records.append(EventRecord.of(task_id, seq, applied, final=task.status.state.is_terminal))
        if not one_save:
            staged.append(store.stage(task, seq, records[-1]))
    await (store.stage_records(task, records) if one_save else asyncio.gather(*staged))


class TaskRowWrites(Triggers):
    """Counts the writes of task rows (a trigger on the table)."""

    SQLITE = (
        "CREATE TABLE row_writes (task_id TEXT NOT NULL)",
        f"""CREATE TRIGGER row_inserted AFTER INSERT ON {tasks}
            BEGIN INSERT INTO row_writes VALUES (NEW.id); END""",
        f"""CREATE TRIGGER row_updated AFTER UPDATE ON {tasks}
            BEGIN INSERT INTO row_writes VALUES (NEW.id); END""",
    )
    POSTGRESQL = (
        "CREATE TABLE row_writes (task_id TEXT NOT NULL)",
        """CREATE FUNCTION count_row() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN INSERT INTO row_writes VALUES (NEW.id); RETURN NULL; END $$""",
        f"""CREATE TRIGGER row_written AFTER INSERT OR UPDATE ON {tasks}
            FOR EACH ROW EXECUTE FUNCTION count_row()""",
    )

    async def of(self, task_id: str) -> int:
        async with self.engine.connect() as connection:
            query = text("SELECT count(*) FROM row_writes WHERE task_id = :id")
            return int(await connection.scalar(query, {"id": task_id}) or 0)


@pytest.mark.parametrize("one_save", [False, True], ids=["queued together", "one save"])
@pytest.mark.parametrize(
    ("chunks", "ends"), [(0, True), (1, True), (5, True), (5, False), (300, True)]
)
async def test_saves_of_a_task_queued_together_store_what_they_store_one_by_one(
    sql_backend: Backend, chunks: int, ends: bool, one_save: bool
) -> None:
    store = await sql_backend.open()
    assert isinstance(store, SqlTaskStore)
    writes, rows = TaskJsonWrites(store), TaskRowWrites(store)
    await writes.install()
    await rows.install()
    one_by_one, together = new_id(), new_id()
    await tell(store, one_by_one, story_of_a_task(one_by_one, chunks, ends=ends), together=False)
    times_before, _ = await writes.totals()

    story = story_of_a_task(together, chunks, ends=ends)
    await tell(store, together, story, together=True, one_save=one_save)

    times, _ = await writes.totals()
    assert times - times_before == 1, "the task's JSON is written once"
    assert await rows.of(together) == 1, "and its row once"
    assert await rows.of(one_by_one) == chunks + (3 if ends else 2)
    expected, stored = await store.get(one_by_one), await store.get(together)
    assert expected is not None and stored is not None
    assert stored.seq == expected.seq == chunks + (3 if ends else 2)
    same_ids = stored.task.to_json().replace(together.encode(), one_by_one.encode())
    assert same_ids == expected.task.to_json()
    logged = [(r.seq, r.payload) for r in await store.events_after(together, 0)]
    assert [
        (seq, payload.replace(together.encode(), one_by_one.encode())) for seq, payload in logged
    ] == [(r.seq, r.payload) for r in await store.events_after(one_by_one, 0)]
    # What the row says after the merged save is what the next save starts from.
    follow_up = story_of_a_task(together, 2, ends=True)[1:] if not ends else []
    task = stored.task
    for seq, change in enumerate(follow_up, start=stored.seq + 1):
        applied = apply_event(task, change)
        await store.save(task, seq, EventRecord.of(together, seq, applied, final=False))
    if follow_up:
        final = await store.get(together)
        assert final is not None and final.task.status.state is TaskState.COMPLETED
        assert final.task.artifacts and final.task.artifacts[0].text.endswith("0001")


async def test_a_quick_tasks_claim_and_saves_leave_no_runner_behind(sql_backend: Backend) -> None:
    store = await sql_backend.open()
    assert isinstance(store, SqlTaskStore)
    quick, paused = new_id(), new_id()
    claims = [store.stage_claim(quick, "replica-1"), store.stage_claim(paused, "replica-1")]
    await asyncio.gather(
        *claims,
        tell(store, quick, story_of_a_task(quick, 1, ends=True), together=True),
        tell(store, paused, story_of_a_task(paused, 1, ends=False), together=True),
    )

    assert await runners(store) == {paused: "replica-1"}


@given(
    st.datetimes(
        min_value=datetime(1000, 1, 1),
        max_value=datetime(9000, 1, 1),
        timezones=st.none() | st.just(UTC) | st.timezones(),
    )
)
def test_the_sqlite_writer_stores_timestamps_as_sqlalchemy_would(moment: datetime) -> None:
    dialect = sqlite.dialect()
    processor = tasks.c.created_at.type.dialect_impl(dialect).bind_processor(dialect)
    assert processor is not None
    assert utc_text(moment) == processor(moment)


@given(st.lists(st.tuples(st.booleans(), st.binary(max_size=64)), min_size=2, max_size=8))
def test_events_packed_in_one_row_unpack_as_they_were(events: list[tuple[bool, bytes]]) -> None:
    records = [
        EventRecord("t", seq, None, final, payload)
        for seq, (final, payload) in enumerate(events, start=5)
    ]
    packed = pack_events(records)

    assert unpack_events(packed) == events
    for cut in range(len(packed)):  # a damaged row says so instead of losing events silently
        try:
            unpacked = unpack_events(packed[:cut])
        except ValueError:
            continue
        assert len(unpacked) < len(events) and unpacked == events[: len(unpacked)]


def test_a_log_trim_sweeps_whenever_its_range_passes_a_multiple_of_the_sweep() -> None:
    def start(first: int, up_to: int) -> int:
        trimmed_from: int = trim("t", first, up_to)["trimmed_from"]
        return trimmed_from

    assert start(5, 5) == 5  # one event: the one that fell out of the bound
    assert start(TRIM_SWEEP, TRIM_SWEEP) == 0
    assert start(TRIM_SWEEP - 2, TRIM_SWEEP + 3) == 0  # several, passing a multiple
    assert start(TRIM_SWEEP + 1, TRIM_SWEEP + 5) == TRIM_SWEEP + 1
    assert start(-3, 2) == 0  # a first row's range starts before the log
