"""SqlTaskLog: tasks and their event logs in SQL (saves go through `SqlSaves`)."""

from __future__ import annotations

from asyncio import Future
from collections.abc import Sequence

from sqlalchemy import ColumnElement, func, literal, select, tuple_

from accord.core.deliveries import Delivery
from accord.core.principal import ANONYMOUS_OWNER
from accord.core.query import Cursor, TaskPage, TaskQuery
from accord.core.records import EventRecord
from accord.store.sql.database import SqlDatabase
from accord.store.sql.rows import event_records
from accord.store.sql.saves import SqlSaves
from accord.store.sql.schema import (
    UtcDateTime,
    task_events,
    tasks,
)
from accord.store.sql.task_reads import TASK_READ, WITH_JSON, folded, task_read
from accord.store.stored import StoredTask
from accord.store.task_log import TaskLog
from accord.types import Task


class SqlTaskLog(TaskLog):
    """A task is a row with its JSON (a snapshot) and its log; a read folds the events logged
    after the snapshot into it. Each save is atomic: the task row moves from version
    `seq - 1` to `seq` (a conditional UPDATE, or an INSERT for `seq` 1) and the events join
    the log; a row that moved on meanwhile makes the save fail with StaleTaskError and
    change nothing."""

    db: SqlDatabase
    saves: SqlSaves

    async def get(self, task_id: str, owner: str | None = None) -> StoredTask | None:
        async with self.db.reading() as connection:
            row = (await connection.execute(task_read(task_id, owner))).first()
            return await folded(connection, row) if row is not None else None

    async def context_owner(self, context_id: str) -> str | None:
        async with self.db.reading() as connection:
            return await connection.scalar(
                select(tasks.c.owner).where(tasks.c.context_id == context_id).limit(1)
            )

    async def save(
        self,
        task: Task,
        seq: int,
        record: EventRecord | None = None,
        *,
        owner: str = ANONYMOUS_OWNER,
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
    ) -> None:
        await self.stage(task, seq, record, owner=owner, outbox=outbox, epoch=epoch)

    def stage_span(
        self,
        task: Task,
        previous: int,
        seq: int,
        records: Sequence[EventRecord],
        *,
        owner: str,
        outbox: Sequence[Delivery],
        epoch: int,
        task_json: bytes | None = None,
    ) -> Future[None]:
        return self.saves.stage(task, previous, seq, records, owner, outbox, epoch, task_json)

    async def events_after(
        self, task_id: str, seq: int, limit: int | None = None
    ) -> list[EventRecord]:
        async with self.db.reading() as connection:
            result = await connection.execute(
                select(task_events)
                .where(task_events.c.task_id == task_id, task_events.c.seq > seq)
                .order_by(task_events.c.seq)
                .limit(limit)  # a row holds one event or more: enough rows for `limit`
            )
            records = [
                record for row in result for record in event_records(row) if record.seq > seq
            ]
        return records[:limit]

    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        after = Cursor.decode(query.page_token) if query.page_token else None
        filters = _filters(query)
        page = (
            select(*TASK_READ, tasks.c.updated_at)
            .select_from(WITH_JSON)
            .where(*filters)
            .order_by(tasks.c.updated_at.desc(), tasks.c.id.desc())
            .limit(query.page_size + 1)
        )
        if after is not None:
            page = page.where(_before(after))
        async with self.db.reading() as connection:
            total = await connection.scalar(select(func.count()).select_from(tasks).where(*filters))
            rows = (await connection.execute(page)).all()
            more = len(rows) > query.page_size
            rows = rows[: query.page_size]
            found = [await folded(connection, row) for row in rows]
        return TaskPage(
            tasks=[stored.task for stored in found if stored is not None],
            next_page_token=Cursor(rows[-1].updated_at, rows[-1].id).encode() if more else "",
            page_size=query.page_size,
            total_size=total or 0,
        )


def _filters(query: TaskQuery) -> list[ColumnElement[bool]]:
    filters: list[ColumnElement[bool]] = []
    if query.owner is not None:
        filters.append(tasks.c.owner == query.owner)
    if query.context_id is not None:
        filters.append(tasks.c.context_id == query.context_id)
    if query.state is not None:
        filters.append(tasks.c.state == query.state.value)
    if query.updated_after is not None:
        filters.append(tasks.c.updated_at >= query.updated_after)
    return filters


def _before(cursor: Cursor) -> ColumnElement[bool]:
    """Rows after `cursor` in the listing order (status time, then id, both descending)."""
    return tuple_(tasks.c.updated_at, tasks.c.id) < tuple_(
        literal(cursor.updated, UtcDateTime()), literal(cursor.task_id, tasks.c.id.type)
    )
