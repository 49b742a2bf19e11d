"""SqlRunners: which replica runs which task, and which replicas are alive, in SQL."""

from __future__ import annotations

from asyncio import Future
from datetime import datetime

from sqlalchemy import ColumnElement, and_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from accord.core.query import RUNNING_STATES
from accord.store.runners import RunnerRegistry
from accord.store.sql.batches import RunnerClaim
from accord.store.sql.database import SqlDatabase
from accord.store.sql.saves import SqlSaves
from accord.store.sql.schema import (
    replicas,
    task_runners,
    tasks,
)
from accord.store.sql.task_reads import TASK_READ, WITH_JSON, folded, task_read
from accord.store.stored import Orphan, StoredTask


class SqlRunners(RunnerRegistry):
    """Replicas and their heartbeats, tasks and their runners; claims start a new epoch of
    the task in the same transaction (a staged claim of a new task goes with its saves)."""

    tracks_runners = True
    db: SqlDatabase
    saves: SqlSaves

    async def heartbeat(self, replica_id: str, expires_at: datetime) -> None:
        statement = self.db.insert(replicas).values(replica_id=replica_id, alive_until=expires_at)
        async with self.db.writing() as connection:
            await connection.execute(
                statement.on_conflict_do_update(
                    index_elements=[replicas.c.replica_id], set_={"alive_until": expires_at}
                )
            )

    async def record_runner(self, task_id: str, replica_id: str) -> None:
        await self.stage_claim(task_id, replica_id)

    async def claim(
        self, task_id: str, replica_id: str, *, at_seq: int | None = None
    ) -> StoredTask | None:
        unfinished = [tasks.c.id == task_id, tasks.c.finished_at.is_(None)]
        if at_seq is not None:
            unfinished.append(tasks.c.seq == at_seq)
        async with self.db.writing() as connection:
            return await self._claimed(connection, unfinished, task_id, replica_id)

    async def _claimed(
        self,
        connection: AsyncConnection,
        where: list[ColumnElement[bool]],
        task_id: str,
        replica_id: str,
    ) -> StoredTask | None:
        """Move the task's row matching `where` to a new epoch, record its runner, and read
        it back (all in the caller's transaction); None when no row matched."""
        bumped = await connection.execute(
            update(tasks).where(*where).values(epoch=tasks.c.epoch + 1).returning(tasks.c.epoch)
        )
        if bumped.first() is None:
            return None
        runner = self.db.insert(task_runners).values(task_id=task_id, replica_id=replica_id)
        await connection.execute(
            runner.on_conflict_do_update(
                index_elements=[task_runners.c.task_id], set_={"replica_id": replica_id}
            )
        )
        row = (await connection.execute(task_read(task_id))).first()
        return await folded(connection, row) if row is not None else None

    def stage_claim(self, task_id: str, replica_id: str) -> Future[None]:
        return self.saves.enqueue(RunnerClaim(task_id, replica_id))

    async def orphans(self, now: datetime) -> list[Orphan]:
        alive = replicas.c.alive_until > now
        query = (
            select(*TASK_READ, task_runners.c.replica_id)
            .select_from(
                WITH_JSON.outerjoin(task_runners, task_runners.c.task_id == tasks.c.id).outerjoin(
                    replicas, and_(replicas.c.replica_id == task_runners.c.replica_id, alive)
                )
            )
            .where(
                tasks.c.state.in_([state.value for state in RUNNING_STATES]),
                replicas.c.replica_id.is_(None),
            )
        )
        async with self.db.reading() as connection:
            rows = (await connection.execute(query)).all()
            found = [(await folded(connection, row), row.replica_id) for row in rows]
        return [Orphan(stored, runner) for stored, runner in found if stored is not None]

    async def take_over(
        self, task_id: str, dead_runner: str | None, replica_id: str
    ) -> StoredTask | None:
        # Compare-and-set on the runner: one replica wins; its claim then starts a new epoch.
        if dead_runner is None:
            statement = (
                self.db.insert(task_runners)
                .values(task_id=task_id, replica_id=replica_id)
                .on_conflict_do_nothing(index_elements=[task_runners.c.task_id])
            )
        else:
            statement = (
                update(task_runners)
                .where(task_runners.c.task_id == task_id, task_runners.c.replica_id == dead_runner)
                .values(replica_id=replica_id)
            )
        unfinished = [tasks.c.id == task_id, tasks.c.finished_at.is_(None)]
        async with self.db.writing() as connection:
            if (await connection.execute(statement)).rowcount != 1:
                return None
            return await self._claimed(connection, unfinished, task_id, replica_id)
