"""SqlSaves: a SQL store's saves and runner claims, queued and committed in groups."""

from __future__ import annotations

import asyncio
from asyncio import Future
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

from accord.core.deliveries import Delivery
from accord.core.records import EventRecord
from accord.store.sql.batches import (
    ConnectionTarget,
    DialectStatements,
    TaskSave,
    Write,
    merge_saves,
    write_batch,
)
from accord.store.sql.database import SqlDatabase
from accord.store.sql.group_commit import GroupCommit, Outcome
from accord.store.sql.postgres_writer import one_write_per_task, write_postgres_batch
from accord.store.sql.rows import delivery_values, event_values, task_values
from accord.store.sql.snapshots import SnapshotPolicy
from accord.store.sql.sqlite_writer import SqliteBatchWriter
from accord.types import Task


class SqlSaves:
    """Saves and runner claims are group-committed: one writer commits what was queued while
    its previous transaction ran in one transaction, each write with its own outcome. SQLite
    writes a batch on a connection and thread of its own (`SqliteBatchWriter`), PostgreSQL in
    one statement (`write_postgres_batch`); a batch with several writes of a task goes one row
    at a time. A save of an artifact chunk writes its event and the row's new `seq` only,
    leaving the task's JSON a snapshot (`SnapshotPolicy` decides when it is written again)."""

    def __init__(self, db: SqlDatabase, max_events_per_task: int | None) -> None:
        self.db = db
        self._max_events = max_events_per_task
        self._statements = DialectStatements(db.insert)
        # SQLite's batches skip SQLAlchemy and aiosqlite (a thread hop per statement).
        self._sqlite_batches = SqliteBatchWriter(db.engine.url) if db.one_writer else None
        self._batch = GroupCommit(self._commit_batch)
        self._snapshots = SnapshotPolicy(max_events_per_task)
        self._before_open: Future[None] | None = None

    def stage(
        self,
        task: Task,
        previous: int,
        seq: int,
        records: Sequence[EventRecord],
        owner: str,
        outbox: Sequence[Delivery],
        epoch: int,
        task_json: bytes | None,
    ) -> Future[None]:
        """Queue the save of `task` from version `previous` to `seq` (see `TaskLog.stage_span`)."""
        save = self._task_save(task, previous, seq, records, owner, epoch, task_json)
        if outbox:
            save = replace(save, deliveries=tuple(delivery_values(d) for d in outbox))
        committed = self.enqueue(save)
        committed.add_done_callback(lambda done: self._check_saved(task.id, done))
        return committed

    def enqueue(self, write: Write) -> Future[None]:
        """Queue `write` for the group commit; the future completes once it is committed."""
        opening = self._before_open
        if self.db.opened and (opening is None or opening.done()):
            return self._batch.enqueue(write)
        # In line behind the writes staged before the store was open.
        committed = asyncio.ensure_future(self._submit_after(write, opening))
        self._before_open = committed
        return committed

    async def close(self) -> None:
        """Wait for the queued writes, then let the SQLite writer go."""
        await self._batch.drain()
        if self._sqlite_batches is not None:
            await self._sqlite_batches.close()

    def _task_save(
        self,
        task: Task,
        previous: int,
        seq: int,
        records: Sequence[EventRecord],
        owner: str,
        epoch: int,
        task_json: bytes | None,
    ) -> TaskSave:
        """The rows of a save from version `previous` to `seq` under `epoch`, made now (the
        caller may change `task` next)."""
        now = datetime.now(UTC)
        events = (event_values(records, now),) if records else ()
        held = {"task_id": task.id, "previous_seq": previous, "held_epoch": epoch}
        if records and all(self._snapshots.appends(task.id, r.seq, r) for r in records):
            values: dict[str, Any] = {**held, "seq": seq}
            return TaskSave(
                task.id, previous, seq, values, events, terminal=False, appended=True, epoch=epoch
            )
        snapshot = (task_json or task.to_json()).decode()
        values = task_values(task, seq, now)
        if previous == 0:
            values.update(id=task.id, created_at=now, owner=owner, epoch=epoch)
        else:
            values.update(held)
        terminal = task.status.state.is_terminal
        open_ended = not terminal and not (records and records[-1].final)
        self._snapshots.snapshotted(task.id, len(snapshot), open_ended=open_ended)
        return TaskSave(task.id, previous, seq, values, events, terminal, snapshot, epoch=epoch)

    async def _submit_after(self, write: Write, previous: Future[None] | None) -> None:
        if previous is not None:
            await asyncio.wait([previous])
        await self.db.open()
        await self._batch.submit(write)

    def _check_saved(self, task_id: str, saved: Future[None]) -> None:
        if saved.cancelled() or saved.exception() is not None:
            self._snapshots.forget(task_id)  # the row is not what the policy thinks

    async def _commit_batch(self, batch: Sequence[Write]) -> list[Outcome]:
        writes, into = merge_saves(batch)
        outcomes = await self._write_merged(writes)
        return [outcomes[at] for at in into]

    async def _write_merged(self, batch: Sequence[Write]) -> list[Outcome]:
        if self._sqlite_batches is not None and self.db.one_writer is not None:
            async with self.db.one_writer:
                return await self._sqlite_batches.write(batch, self._max_events)
        if (
            self.db.dialect == "postgresql"
            and one_write_per_task(batch)
            and not any(isinstance(write, TaskSave) and write.deliveries for write in batch)
        ):
            return await write_postgres_batch(self.db.engine, batch, self._max_events)
        async with self.db.writing() as connection:
            return await connection.run_sync(self._write_batch, batch)

    def _write_batch(self, connection: Connection, batch: Sequence[Write]) -> list[Outcome]:
        target = ConnectionTarget(connection, self._statements)
        return write_batch(target, batch, self._max_events)
