"""SqlTaskStore: tasks, event logs, push configs and runners in SQLite or PostgreSQL."""

from __future__ import annotations

import asyncio
from asyncio import Future
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    Table,
    and_,
    delete,
    func,
    literal,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.orm import aliased

from accord.core.deliveries import Delivery
from accord.core.principal import ANONYMOUS_OWNER
from accord.core.push import PushTarget
from accord.core.query import RUNNING_STATES, Cursor, TaskPage, TaskQuery
from accord.core.records import EventRecord
from accord.store.base import Orphan, StoredTask, TaskStore
from accord.store.retention import CleanupReport, Retention
from accord.store.sql.batches import (
    ConnectionTarget,
    DialectStatements,
    RunnerClaim,
    TaskSave,
    Write,
    merge_saves,
    write_batch,
)
from accord.store.sql.engine import writer
from accord.store.sql.group_commit import GroupCommit, Outcome
from accord.store.sql.migrations import UpgradeResult, upgrade
from accord.store.sql.postgres_writer import one_write_per_task, write_postgres_batch
from accord.store.sql.rows import (
    delivery,
    delivery_values,
    event_records,
    event_values,
    push_target,
    stored_task,
    task_values,
)
from accord.store.sql.schema import (
    UtcDateTime,
    push_configs,
    push_deliveries,
    replicas,
    store_agent,
    task_events,
    task_runners,
    task_snapshots,
    tasks,
)
from accord.store.sql.snapshots import SnapshotPolicy
from accord.store.sql.sqlite_writer import SqliteBatchWriter
from accord.types import Task

_INSERTS = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}

_TASK_READ = (
    tasks.c.id,
    task_snapshots.c.task,
    tasks.c.seq,
    tasks.c.snapshot_seq,
    tasks.c.owner,
    tasks.c.epoch,
)
"""The columns a task is read from (in `_WITH_JSON`): its JSON, and which events to fold in."""
_WITH_JSON = tasks.join(task_snapshots, task_snapshots.c.task_id == tasks.c.id)
_FOLD_ATTEMPTS = 3

DEAD_REPLICA_TTL = timedelta(days=1)
"""How long cleanup remembers a replica after its heartbeat expired (it is dead either way)."""


class SqlTaskStore(TaskStore):
    """A TaskStore on SQLAlchemy's async engine: SQLite (aiosqlite) or PostgreSQL (asyncpg).

    Each save is atomic: the task row moves from version `seq - 1` to `seq` (a
    conditional UPDATE, or an INSERT for `seq` 1) and the event joins the log; a row that
    moved on meanwhile makes the save fail with StaleTaskError and change nothing. A save
    of an artifact chunk writes its event and the row's new `seq` only, leaving the task's
    JSON a snapshot that reads complete with the log after it (`SnapshotPolicy` decides when
    the JSON is written again), so an event costs what the event weighs. Saves and
    runner claims are group-committed: one writer commits what was queued while its previous
    transaction ran in one transaction, each save with its own outcome. SQLite writes a batch
    on a connection and thread of its own (`SqliteBatchWriter`), PostgreSQL in one statement
    (`write_postgres_batch`); a batch with several writes of a task goes one row at a time.
    The schema is created or upgraded by `open()`, which every operation awaits first.
    `close()` waits for queued saves, then disposes of the engine.
    """

    tracks_runners = True

    def __init__(self, engine: AsyncEngine, *, retention: Retention | None = None) -> None:
        if engine.dialect.name not in _INSERTS:
            raise ValueError(f"SqlTaskStore supports SQLite and PostgreSQL, not {engine.url}")
        self.engine = engine
        self.retention = retention if retention is not None else Retention()
        self._writer = writer(engine)
        self._batch_statements = DialectStatements(self._insert)
        self._opened = False
        self._opening = asyncio.Lock()
        # SQLite has one writer at a time: this process's writers queue here rather than in
        # SQLite's busy handler, which polls with sleeps. Other processes still meet the latter.
        self._one_writer = asyncio.Lock() if engine.dialect.name == "sqlite" else None
        # SQLite's batches skip SQLAlchemy and aiosqlite (a thread hop per statement).
        self._sqlite_batches = SqliteBatchWriter(engine.url) if self._one_writer else None
        self._batch = GroupCommit(self._commit_batch)
        self._snapshots = SnapshotPolicy(self.retention.max_events_per_task)
        self._saves_before_open: Future[None] | None = None

    def __repr__(self) -> str:
        return f"SqlTaskStore({self.engine.url.render_as_string()!r})"

    # --- lifecycle ------------------------------------------------------------------------

    async def open(self) -> None:
        if self._opened:
            return
        async with self._opening:
            if not self._opened:
                await self.upgrade()
                self._opened = True

    async def upgrade(self) -> UpgradeResult:
        """Create or upgrade the schema (see `accord.store.sql.migrations`)."""
        return await upgrade(self.engine)

    async def close(self) -> None:
        await self._batch.drain()
        if self._sqlite_batches is not None:
            await self._sqlite_batches.close()
        await self.engine.dispose()
        self._opened = False

    @asynccontextmanager
    async def _reading(self) -> AsyncIterator[AsyncConnection]:
        await self.open()
        async with self.engine.connect() as connection:
            yield connection

    @asynccontextmanager
    async def _writing(self) -> AsyncIterator[AsyncConnection]:
        await self.open()
        async with self._one_writer or nullcontext(), self._writer.begin() as connection:
            yield connection

    def _insert(self, table: Table) -> Any:
        """INSERT in this dialect, with its ON CONFLICT clauses (the same on both backends)."""
        return _INSERTS[self.engine.dialect.name](table)

    async def recorded_agent(self, agent: str) -> str:
        row = {"id": 1, "agent": agent, "recorded_at": datetime.now(UTC)}
        statement = self._insert(store_agent).values(row).on_conflict_do_nothing()
        async with self._writing() as connection:
            await connection.execute(statement)  # a replica starting at once: one row wins
            return str(await connection.scalar(select(store_agent.c.agent)))

    # --- tasks and their events -------------------------------------------------------------

    async def get(self, task_id: str, owner: str | None = None) -> StoredTask | None:
        async with self._reading() as connection:
            row = (await connection.execute(_task_read(task_id, owner))).first()
            return await self._folded(connection, row) if row is not None else None

    async def context_owner(self, context_id: str) -> str | None:
        async with self._reading() as connection:
            return await connection.scalar(
                select(tasks.c.owner).where(tasks.c.context_id == context_id).limit(1)
            )

    async def _folded(self, connection: AsyncConnection, row: Any) -> StoredTask | None:
        """The task of a row read with `_TASK_READ`, its log tail folded into its snapshot.

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
            row = (await connection.execute(_task_read(row.id))).first()
            if row is None:
                return None
        raise RuntimeError(f"the event log of task {row.id} lacks events its row needs")

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
    ) -> Future[None]:
        save = self._task_save(task, previous, seq, records, owner, epoch)
        if outbox:
            save = replace(save, deliveries=tuple(delivery_values(d) for d in outbox))
        committed = self._enqueue(save)
        committed.add_done_callback(lambda done: self._check_saved(task.id, done))
        return committed

    def _enqueue(self, write: Write) -> Future[None]:
        """Queue `write` for the group commit; the future completes once it is committed."""
        opening = self._saves_before_open
        if self._opened and (opening is None or opening.done()):
            return self._batch.enqueue(write)
        # In line behind the writes staged before the store was open.
        committed = asyncio.ensure_future(self._submit_after(write, opening))
        self._saves_before_open = committed
        return committed

    def _task_save(
        self,
        task: Task,
        previous: int,
        seq: int,
        records: Sequence[EventRecord],
        owner: str,
        epoch: int,
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
        # A record of the task itself (a new task's first) carries its JSON already.
        known = records[-1].payload if records and records[-1].event is task else None
        snapshot = (known or task.to_json()).decode()
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
        await self.open()
        await self._batch.submit(write)

    def _check_saved(self, task_id: str, saved: Future[None]) -> None:
        if saved.cancelled() or saved.exception() is not None:
            self._snapshots.forget(task_id)  # the row is not what the policy thinks

    async def _commit_batch(self, batch: Sequence[Write]) -> list[Outcome]:
        writes, into = merge_saves(batch)
        outcomes = await self._write_merged(writes)
        return [outcomes[at] for at in into]

    async def _write_merged(self, batch: Sequence[Write]) -> list[Outcome]:
        bound = self.retention.max_events_per_task
        if self._sqlite_batches is not None and self._one_writer is not None:
            async with self._one_writer:
                return await self._sqlite_batches.write(batch, bound)
        if (
            self.engine.dialect.name == "postgresql"
            and one_write_per_task(batch)
            and not any(isinstance(write, TaskSave) and write.deliveries for write in batch)
        ):
            return await write_postgres_batch(self.engine, batch, bound)
        async with self._writing() as connection:
            return await connection.run_sync(self._write_batch, batch)

    def _write_batch(self, connection: Connection, batch: Sequence[Write]) -> list[Outcome]:
        target = ConnectionTarget(connection, self._batch_statements)
        return write_batch(target, batch, self.retention.max_events_per_task)

    async def events_after(
        self, task_id: str, seq: int, limit: int | None = None
    ) -> list[EventRecord]:
        async with self._reading() as connection:
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
            select(*_TASK_READ, tasks.c.updated_at)
            .select_from(_WITH_JSON)
            .where(*filters)
            .order_by(tasks.c.updated_at.desc(), tasks.c.id.desc())
            .limit(query.page_size + 1)
        )
        if after is not None:
            page = page.where(_before(after))
        async with self._reading() as connection:
            total = await connection.scalar(select(func.count()).select_from(tasks).where(*filters))
            rows = (await connection.execute(page)).all()
            more = len(rows) > query.page_size
            rows = rows[: query.page_size]
            found = [await self._folded(connection, row) for row in rows]
        return TaskPage(
            tasks=[stored.task for stored in found if stored is not None],
            next_page_token=Cursor(rows[-1].updated_at, rows[-1].id).encode() if more else "",
            page_size=query.page_size,
            total_size=total or 0,
        )

    # --- push notification configs ---------------------------------------------------------

    async def set_push_config(self, task_id: str, target: PushTarget) -> PushTarget:
        target = target.identified()
        values = {
            "config": target.config.to_json().decode(),
            "payload_format": target.payload_format,
        }
        statement = self._insert(push_configs).values(
            task_id=task_id, config_id=target.config.id, **values
        )
        async with self._writing() as connection:
            await connection.execute(
                statement.on_conflict_do_update(
                    index_elements=[push_configs.c.task_id, push_configs.c.config_id],
                    set_=values,
                )
            )
        return target

    async def get_push_config(
        self, task_id: str, config_id: str, owner: str | None = None
    ) -> PushTarget | None:
        async with self._reading() as connection:
            result = await connection.execute(
                select(push_configs.c.config, push_configs.c.payload_format).where(
                    *_push_of(task_id, owner), push_configs.c.config_id == config_id
                )
            )
            row = result.first()
        return push_target(row) if row is not None else None

    async def list_push_configs(self, task_id: str, owner: str | None = None) -> list[PushTarget]:
        async with self._reading() as connection:
            result = await connection.execute(
                select(push_configs.c.config, push_configs.c.payload_format)
                .where(*_push_of(task_id, owner))
                .order_by(push_configs.c.position)
            )
            return [push_target(row) for row in result]

    async def delete_push_config(
        self, task_id: str, config_id: str, owner: str | None = None
    ) -> bool:
        async with self._writing() as connection:
            result = await connection.execute(
                delete(push_configs).where(
                    *_push_of(task_id, owner), push_configs.c.config_id == config_id
                )
            )
        return bool(result.rowcount)

    # --- the outbox ---------------------------------------------------------------------------

    async def claim_deliveries(
        self, now: datetime, lease_until: datetime, limit: int
    ) -> list[Delivery]:
        earlier = aliased(push_deliveries)
        head = ~(
            select(earlier.c.id)
            .where(
                earlier.c.task_id == push_deliveries.c.task_id,
                earlier.c.queue == push_deliveries.c.queue,
                earlier.c.seq < push_deliveries.c.seq,
                earlier.c.parked_at.is_(None),
            )
            .exists()
        )
        due = push_deliveries.c.parked_at.is_(None) & (push_deliveries.c.next_at <= now)
        candidates = (
            select(push_deliveries.c.id)
            .where(due, head)
            .order_by(push_deliveries.c.next_at)
            .limit(limit)
        )
        if self.engine.dialect.name == "postgresql":  # replicas claim different rows
            locked = candidates.with_for_update(skip_locked=True)
            async with self._writing() as connection:
                ids = list((await connection.execute(locked)).scalars())
                return await self._claim(connection, ids, due, lease_until)
        # SQLite: found without the writer's lock, so an idle poll does not hold up saves.
        async with self._reading() as connection:
            ids = list((await connection.execute(candidates)).scalars())
        if not ids:
            return []
        async with self._writing() as connection:  # still heads: a requeue may have come first
            return await self._claim(connection, ids, due & head, lease_until)

    async def _claim(
        self,
        connection: AsyncConnection,
        ids: list[str],
        due: ColumnElement[bool],
        lease_until: datetime,
    ) -> list[Delivery]:
        if not ids:
            return []
        # Compare-and-set: a row another process claimed meanwhile is no longer due.
        result = await connection.execute(
            update(push_deliveries)
            .where(push_deliveries.c.id.in_(ids), due)
            .values(attempts=push_deliveries.c.attempts + 1, next_at=lease_until)
            .returning(*push_deliveries.c)
        )
        return [delivery(row) for row in result]

    async def delivered(self, delivery_id: str) -> None:
        async with self._writing() as connection:
            await connection.execute(
                delete(push_deliveries).where(push_deliveries.c.id == delivery_id)
            )

    async def retry_delivery(self, delivery_id: str, next_at: datetime, error: str) -> None:
        async with self._writing() as connection:
            await connection.execute(
                update(push_deliveries)
                .where(push_deliveries.c.id == delivery_id)
                .values(next_at=next_at, last_error=error)
            )

    async def park_delivery(
        self, delivery_id: str, now: datetime, error: str, *, with_queue: bool = True
    ) -> int:
        async with self._writing() as connection:
            queue = (push_deliveries.c.task_id, push_deliveries.c.queue, push_deliveries.c.seq)
            unparked = push_deliveries.c.parked_at.is_(None)
            found = await connection.execute(
                select(*queue).where(push_deliveries.c.id == delivery_id, unparked)
            )
            parked = found.first()
            if parked is None:
                return 0
            await connection.execute(
                update(push_deliveries)
                .where(push_deliveries.c.id == delivery_id)
                .values(parked_at=now, last_error=error)
            )
            if not with_queue:
                return 1
            rest = await connection.execute(
                update(push_deliveries)
                .where(
                    push_deliveries.c.task_id == parked.task_id,
                    push_deliveries.c.queue == parked.queue,
                    push_deliveries.c.seq > parked.seq,
                    push_deliveries.c.parked_at.is_(None),
                )
                .values(
                    parked_at=now,
                    last_error=func.coalesce(push_deliveries.c.last_error, error),
                )
            )
        return 1 + rest.rowcount

    async def parked_deliveries(self, limit: int = 100) -> list[Delivery]:
        async with self._reading() as connection:
            result = await connection.execute(
                select(push_deliveries)
                .where(push_deliveries.c.parked_at.is_not(None))
                .order_by(push_deliveries.c.parked_at.desc(), push_deliveries.c.seq.desc())
                .limit(limit)
            )
            return [delivery(row) for row in result]

    async def requeue_deliveries(
        self,
        now: datetime,
        deadline: datetime,
        *,
        ids: Sequence[str] | None = None,
        task_id: str | None = None,
    ) -> int:
        outbox = push_deliveries.c
        chosen: ColumnElement[bool] = outbox.parked_at.is_not(None)
        if ids is not None:
            chosen &= outbox.id.in_(ids)
        if task_id is not None:
            chosen &= outbox.task_id == task_id
        # A queue's unparked deliveries go first: one may be under a lease, its claimer's until
        # it runs out (locked here, so a claim committing meanwhile is waited for and seen).
        pending = select(outbox.task_id, outbox.queue, outbox.next_at).where(
            outbox.parked_at.is_(None),
            tuple_(outbox.task_id, outbox.queue).in_(
                select(outbox.task_id, outbox.queue).where(chosen)
            ),
        )
        if self.engine.dialect.name == "postgresql":
            pending = pending.with_for_update()
        fresh = {"attempts": 0, "deadline": deadline, "parked_at": None}
        async with self._writing() as connection:
            due_at: dict[tuple[str, str], datetime] = {}
            for row in await connection.execute(pending):
                queue = (row.task_id, row.queue)
                due_at[queue] = max(due_at.get(queue, now), row.next_at)
            requeued = 0
            for (task, webhook), next_at in due_at.items():
                behind = chosen & (outbox.task_id == task) & (outbox.queue == webhook)
                result = await connection.execute(
                    update(push_deliveries).where(behind).values(next_at=next_at, **fresh)
                )
                requeued += result.rowcount
            # The rest are in queues with nothing pending: due now.
            result = await connection.execute(
                update(push_deliveries).where(chosen).values(next_at=now, **fresh)
            )
        return requeued + result.rowcount

    # --- runners ----------------------------------------------------------------------------

    async def heartbeat(self, replica_id: str, expires_at: datetime) -> None:
        statement = self._insert(replicas).values(replica_id=replica_id, alive_until=expires_at)
        async with self._writing() as connection:
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
        async with self._writing() as connection:
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
        runner = self._insert(task_runners).values(task_id=task_id, replica_id=replica_id)
        await connection.execute(
            runner.on_conflict_do_update(
                index_elements=[task_runners.c.task_id], set_={"replica_id": replica_id}
            )
        )
        row = (await connection.execute(_task_read(task_id))).first()
        return await self._folded(connection, row) if row is not None else None

    def stage_claim(self, task_id: str, replica_id: str) -> Future[None]:
        return self._enqueue(RunnerClaim(task_id, replica_id))

    async def orphans(self, now: datetime) -> list[Orphan]:
        alive = replicas.c.alive_until > now
        query = (
            select(*_TASK_READ, task_runners.c.replica_id)
            .select_from(
                _WITH_JSON.outerjoin(task_runners, task_runners.c.task_id == tasks.c.id).outerjoin(
                    replicas, and_(replicas.c.replica_id == task_runners.c.replica_id, alive)
                )
            )
            .where(
                tasks.c.state.in_([state.value for state in RUNNING_STATES]),
                replicas.c.replica_id.is_(None),
            )
        )
        async with self._reading() as connection:
            rows = (await connection.execute(query)).all()
            found = [(await self._folded(connection, row), row.replica_id) for row in rows]
        return [Orphan(stored, runner) for stored, runner in found if stored is not None]

    async def take_over(
        self, task_id: str, dead_runner: str | None, replica_id: str
    ) -> StoredTask | None:
        # Compare-and-set on the runner: one replica wins; its claim then starts a new epoch.
        if dead_runner is None:
            statement = (
                self._insert(task_runners)
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
        async with self._writing() as connection:
            if (await connection.execute(statement)).rowcount != 1:
                return None
            return await self._claimed(connection, unfinished, task_id, replica_id)

    # --- retention --------------------------------------------------------------------------

    async def cleanup(self, now: datetime | None = None) -> CleanupReport:
        now = now if now is not None else datetime.now(UTC)
        removed_tasks = removed_events = 0
        async with self._writing() as connection:
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
            await self._forget_runners(connection, now)
        return CleanupReport(tasks=removed_tasks, events=removed_events)

    async def _forget_runners(self, connection: AsyncConnection, now: datetime) -> None:
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


def _task_read(task_id: str, owner: str | None = None) -> Select[Any]:
    read = select(*_TASK_READ).select_from(_WITH_JSON).where(tasks.c.id == task_id)
    return read if owner is None else read.where(tasks.c.owner == owner)


def _push_of(task_id: str, owner: str | None) -> list[ColumnElement[bool]]:
    """The push configs of a task; with `owner`, only while that owner's task exists."""
    of_task = [push_configs.c.task_id == task_id]
    if owner is not None:
        owned = select(tasks.c.id).where(tasks.c.id == task_id, tasks.c.owner == owner)
        of_task.append(owned.exists())
    return of_task


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
