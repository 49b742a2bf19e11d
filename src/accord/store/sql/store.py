"""SqlTaskStore: tasks, event logs, push configs, the outbox and runners in SQLite or PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from accord.store.base import TaskStore
from accord.store.retention import CleanupReport, Retention
from accord.store.sql.database import SqlDatabase
from accord.store.sql.migrations import UpgradeResult
from accord.store.sql.outbox import SqlOutbox
from accord.store.sql.push_configs import SqlPushConfigs
from accord.store.sql.runners import SqlRunners
from accord.store.sql.saves import SqlSaves
from accord.store.sql.schema import (
    push_configs,
    push_deliveries,
    replicas,
    store_agent,
    task_events,
    task_runners,
    task_snapshots,
    tasks,
)
from accord.store.sql.task_log import SqlTaskLog

DEAD_REPLICA_TTL = timedelta(days=1)
"""How long cleanup remembers a replica after its heartbeat expired (it is dead either way)."""


class SqlTaskStore(SqlTaskLog, SqlPushConfigs, SqlOutbox, SqlRunners, TaskStore):
    """A TaskStore on SQLAlchemy's async engine: SQLite (aiosqlite) or PostgreSQL (asyncpg).

    Each job has its part: tasks and their logs (`SqlTaskLog`), push configs
    (`SqlPushConfigs`), the outbox (`SqlOutbox`), runners (`SqlRunners`); saves and runner
    claims are group-committed (`SqlSaves`), and every part reads and writes through one
    `SqlDatabase`. The schema is created or upgraded by `open()`, which every operation
    awaits first. `close()` waits for queued saves, then disposes of the engine.
    """

    def __init__(self, engine: AsyncEngine, *, retention: Retention | None = None) -> None:
        self.db = SqlDatabase(engine)
        self.engine = engine
        self.retention = retention if retention is not None else Retention()
        self.saves = SqlSaves(self.db, self.retention.max_events_per_task)

    @property
    def system(self) -> str:  # type: ignore[override]
        """The database: `sqlite` or `postgresql`."""
        return self.db.dialect

    def __repr__(self) -> str:
        return f"SqlTaskStore({self.engine.url.render_as_string()!r})"

    async def open(self) -> None:
        await self.db.open()

    async def upgrade(self) -> UpgradeResult:
        """Create or upgrade the schema (see `accord.store.sql.migrations`)."""
        return await self.db.upgrade()

    async def close(self) -> None:
        await self.saves.close()
        await self.db.close()

    async def recorded_agent(self, agent: str) -> str:
        row = {"id": 1, "agent": agent, "recorded_at": datetime.now(UTC)}
        statement = self.db.insert(store_agent).values(row).on_conflict_do_nothing()
        async with self.db.writing() as connection:
            await connection.execute(statement)  # a replica starting at once: one row wins
            return str(await connection.scalar(select(store_agent.c.agent)))

    async def cleanup(self, now: datetime | None = None) -> CleanupReport:
        now = now if now is not None else datetime.now(UTC)
        removed_tasks = removed_events = 0
        async with self.db.writing() as connection:
            if self.retention.finished_task_ttl is not None:
                finished = tasks.c.finished_at < now - self.retention.finished_task_ttl
                expired = select(tasks.c.id).where(finished).scalar_subquery()
                result = await connection.execute(
                    delete(task_events).where(task_events.c.task_id.in_(expired))
                )
                removed_events += result.rowcount
                await connection.execute(
                    delete(push_configs).where(push_configs.c.task_id.in_(expired))
                )
                await connection.execute(
                    delete(push_deliveries).where(push_deliveries.c.task_id.in_(expired))
                )
                await connection.execute(
                    delete(task_snapshots).where(task_snapshots.c.task_id.in_(expired))
                )
                removed_tasks = (await connection.execute(delete(tasks).where(finished))).rowcount
            if self.retention.event_ttl is not None:
                # Events a task's snapshot does not hold yet stay, however old.
                unfolded = (
                    select(tasks.c.id)
                    .where(
                        tasks.c.id == task_events.c.task_id,
                        tasks.c.snapshot_seq < task_events.c.seq,
                    )
                    .exists()
                )
                result = await connection.execute(
                    delete(task_events).where(
                        task_events.c.created_at < now - self.retention.event_ttl, ~unfolded
                    )
                )
                removed_events += result.rowcount
            await _forget_runners(connection, now)
        return CleanupReport(tasks=removed_tasks, events=removed_events)


async def _forget_runners(connection: AsyncConnection, now: datetime) -> None:
    """Drop long-dead replicas, and claims of dead replicas on tasks that never came to be
    (a run that answered with a message); finished tasks lose their runner when saved."""
    await connection.execute(
        delete(replicas).where(replicas.c.alive_until < now - DEAD_REPLICA_TTL)
    )
    task_exists = select(tasks.c.id).where(tasks.c.id == task_runners.c.task_id).exists()
    runner_alive = (
        select(replicas.c.replica_id)
        .where(replicas.c.replica_id == task_runners.c.replica_id, replicas.c.alive_until > now)
        .exists()
    )
    await connection.execute(delete(task_runners).where(~task_exists, ~runner_alive))
