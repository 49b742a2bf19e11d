"""Versioned schema migrations: bring a database to the schema this accord expects, once.

A fresh database gets the whole schema of `schema.py` at once and is recorded at the newest
version. A database at an older version gets each later step of `MIGRATIONS`, in order, in
the same transaction as the row recording it in `accord_schema_version`. A change to the
schema therefore lands twice: in `schema.py` (what fresh databases get) and as a new step at
the end of `MIGRATIONS` (how existing ones catch up). Released steps never change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, MetaData, Table, func, insert, inspect, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from accord.core.principal import unqualified_owner
from accord.store.sql.engine import writer
from accord.store.sql.schema import metadata, push_deliveries, schema_version, store_agent

BASELINE_VERSION = 1
BASELINE_DESCRIPTION = "tasks, task events, push configs, task runners, replicas"

# Serializes migrations of one PostgreSQL database across processes (pg_advisory_xact_lock).
_PG_LOCK_KEY = int.from_bytes(b"accord", "big")


@dataclass(frozen=True, slots=True)
class Migration:
    """One step from version `version - 1` to `version`, run inside the upgrade transaction."""

    version: int
    description: str
    apply: Callable[[Connection], None]


def _push_payload_formats(connection: Connection) -> None:
    connection.execute(
        text(
            "ALTER TABLE accord_push_configs"
            " ADD COLUMN payload_format VARCHAR(64) NOT NULL DEFAULT 'task'"
        )
    )


def _task_snapshots(connection: Connection) -> None:
    collation = ' COLLATE "C"' if connection.dialect.name == "postgresql" else ""
    connection.execute(
        text(
            f"CREATE TABLE accord_task_snapshots (task_id VARCHAR{collation} NOT NULL,"
            " task TEXT NOT NULL, CONSTRAINT pk_accord_task_snapshots PRIMARY KEY (task_id))"
        )
    )
    connection.execute(
        text("INSERT INTO accord_task_snapshots (task_id, task) SELECT id, task FROM accord_tasks")
    )
    connection.execute(text("ALTER TABLE accord_tasks DROP COLUMN task"))
    # NULL: the task's JSON is as of its `seq`, which every row written before this step is.
    connection.execute(text("ALTER TABLE accord_tasks ADD COLUMN snapshot_seq BIGINT"))


def _task_owners(connection: Connection) -> None:
    collation = ' COLLATE "C"' if connection.dialect.name == "postgresql" else ""
    connection.execute(
        text(f"ALTER TABLE accord_tasks ADD COLUMN owner VARCHAR{collation} NOT NULL DEFAULT ''")
    )
    connection.execute(
        text(
            "CREATE INDEX ix_accord_tasks_owner_listing"
            " ON accord_tasks (owner, updated_at DESC, id DESC)"
        )
    )


def _push_outbox(connection: Connection) -> None:
    # The table as schema.py has it (a new table: nothing of the earlier steps' content).
    push_deliveries.create(connection)


def _packed_events(connection: Connection) -> None:
    # NULL: the row holds one event, as every row written before this step does.
    connection.execute(text("ALTER TABLE accord_task_events ADD COLUMN first_seq BIGINT"))


def _store_agent(connection: Connection) -> None:
    # A new table, empty: the first agent to open the store after this step records its name.
    store_agent.create(connection)


def _unqualified_owners(connection: Connection) -> None:
    # Owners were a caller's id alone, with no record of the scheme that authenticated it:
    # an API key's `alice` and a token's `alice` were one owner. Which one made a task is
    # unknown, so no caller gets those tasks by default; each becomes `(unqualified):ID`
    # (accord.core.unqualified_owner), which no scheme-qualified owner can be, and a
    # deployment that knows which scheme made them hands them back with Security(owner_of=).
    # The anonymous owner ('') stays as it is.
    connection.execute(
        text("UPDATE accord_tasks SET owner = :prefix || owner WHERE owner <> ''"),
        {"prefix": unqualified_owner("")},
    )


def _task_epochs(connection: Connection) -> None:
    # 0: the epoch every task has until it is claimed, which writes made before this step name.
    connection.execute(text("ALTER TABLE accord_tasks ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0"))


def _delivery_traces(connection: Connection) -> None:
    # NULL: the deliveries waiting already were saved untraced. A table step 5 made in the
    # same upgrade, as schema.py has it, has the columns already.
    present = {column["name"] for column in inspect(connection).get_columns(push_deliveries.name)}
    for column in ("traceparent", "tracestate"):
        if column not in present:
            connection.execute(text(f"ALTER TABLE {push_deliveries.name} ADD COLUMN {column} TEXT"))


MIGRATIONS: tuple[Migration, ...] = (
    Migration(2, "push configs remember their payload format", _push_payload_formats),
    Migration(
        3, "task JSON in a table of its own; artifact chunks fold in on read", _task_snapshots
    ),
    Migration(4, "tasks belong to the caller that created them", _task_owners),
    Migration(5, "an outbox of webhook deliveries", _push_outbox),
    Migration(6, "the events of one save logged in one row", _packed_events),
    Migration(7, "the store records which agent's tasks it keeps", _store_agent),
    Migration(8, "owners name the scheme that authenticated them", _unqualified_owners),
    Migration(9, "each claim of a task has an epoch that its writes are fenced by", _task_epochs),
    Migration(10, "webhook deliveries keep the trace context of their event", _delivery_traces),
)
"""The steps after the baseline, oldest first."""


@dataclass(frozen=True, slots=True)
class UpgradeResult:
    """The schema version before an upgrade (0: there was no schema) and after it."""

    before: int
    after: int

    @property
    def changed(self) -> bool:
        return self.before != self.after


class SchemaVersionError(RuntimeError):
    """The database was migrated by a newer accord than this one."""


def head_version(steps: Sequence[Migration] = MIGRATIONS) -> int:
    """The version a database has once every step ran."""
    return steps[-1].version if steps else BASELINE_VERSION


@dataclass(frozen=True, slots=True)
class Schema:
    """What `upgrade` brings a database to: the tables of the newest version (`tables`), the
    table recording the versions applied (`versions`, among them), and the later steps."""

    tables: MetaData
    versions: Table
    baseline: str
    steps: Sequence[Migration]


TASK_STORE = Schema(metadata, schema_version, BASELINE_DESCRIPTION, MIGRATIONS)
"""The task store's schema (other stores, like the registry's, keep one of their own)."""


async def upgrade(
    engine: AsyncEngine,
    steps: Sequence[Migration] | None = None,
    *,
    schema: Schema = TASK_STORE,
) -> UpgradeResult:
    """Bring the database behind `engine` to the newest version of `schema` (by `steps`, when
    given, rather than the schema's); idempotent and concurrent-safe.

    Raises SchemaVersionError when the database is at a version newer than this code knows.
    """
    steps = schema.steps if steps is None else steps
    _check_order(steps)
    async with writer(engine).begin() as connection:
        if connection.dialect.name == "postgresql":
            lock = text("SELECT pg_advisory_xact_lock(:key)")
            await connection.execute(lock, {"key": _PG_LOCK_KEY})
        return await connection.run_sync(_upgrade, steps, schema)


def _upgrade(connection: Connection, steps: Sequence[Migration], schema: Schema) -> UpgradeResult:
    head = head_version(steps)
    versions = schema.versions
    current = 0
    if inspect(connection).has_table(versions.name):
        current = connection.scalar(select(func.max(versions.c.version))) or 0
    if current == 0:
        schema.tables.create_all(connection)
        _record(connection, versions, head, schema.baseline)
        return UpgradeResult(0, head)
    if current > head:
        raise SchemaVersionError(
            f"the database schema is at version {current}, newer than this accord knows"
            f" ({head}); run a newer accord against it"
        )
    for step in steps:
        if step.version > current:
            step.apply(connection)
            _record(connection, versions, step.version, step.description)
    return UpgradeResult(current, head)


def _record(connection: Connection, versions: Table, version: int, description: str) -> None:
    row = {"version": version, "description": description, "applied_at": datetime.now(UTC)}
    connection.execute(insert(versions).values(row))


def _check_order(steps: Sequence[Migration]) -> None:
    versions = [step.version for step in steps]
    expected = list(range(BASELINE_VERSION + 1, BASELINE_VERSION + 1 + len(steps)))
    if versions != expected:
        raise ValueError(f"migration versions must run {expected}, got {versions}")
