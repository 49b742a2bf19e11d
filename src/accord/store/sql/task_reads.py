"""Reading a task back: its row, its snapshot, and the events of its log to fold into it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncConnection

from accord.store.sql.rows import event_records, stored_task
from accord.store.sql.schema import task_events, task_snapshots, tasks
from accord.store.stored import StoredTask

TASK_READ = (
    tasks.c.id,
    task_snapshots.c.task,
    tasks.c.seq,
    tasks.c.snapshot_seq,
    tasks.c.owner,
    tasks.c.epoch,
)
"""The columns a task is read from (in `WITH_JSON`): its JSON, and which events to fold in."""
WITH_JSON = tasks.join(task_snapshots, task_snapshots.c.task_id == tasks.c.id)
_FOLD_ATTEMPTS = 3


def task_read(task_id: str, owner: str | None = None) -> Select[Any]:
    """The row of one task (of `owner`, when given), read with `TASK_READ`."""
    read = select(*TASK_READ).select_from(WITH_JSON).where(tasks.c.id == task_id)
    return read if owner is None else read.where(tasks.c.owner == owner)


async def folded(connection: AsyncConnection, row: Any) -> StoredTask | None:
    """The task of a row read with `TASK_READ`, its log tail folded into its snapshot.

    The row and its tail are two statements: when the tail is not all there, a save wrote
    a newer snapshot and trimmed the log in between, and the row is read again.
    """
    for _ in range(_FOLD_ATTEMPTS):
        if row.snapshot_seq is None:
            return stored_task(row)
        result = await connection.execute(
            select(task_events)
            .where(
                task_events.c.task_id == row.id,
                task_events.c.seq > row.snapshot_seq,
                task_events.c.seq <= row.seq,
            )
            .order_by(task_events.c.seq)
        )
        tail = [
            record.payload
            for logged in result
            for record in event_records(logged)
            if record.seq > row.snapshot_seq
        ]
        if len(tail) == row.seq - row.snapshot_seq:
            return stored_task(row, tail)
        row = (await connection.execute(task_read(row.id))).first()
        if row is None:
            return None
    raise RuntimeError(f"the event log of task {row.id} lacks events its row needs")
