"""The PostgreSQL store's batch writer: a whole batch in one statement, on asyncpg directly."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Column, TypeDecorator
from sqlalchemy.ext.asyncio import AsyncEngine

from accord.store.sql.batches import NEW_TASK_COLUMNS, TaskSave, Write, follow_up, refused
from accord.store.sql.group_commit import Outcome
from accord.store.sql.rows import TASK_CHANGES
from accord.store.sql.schema import task_events, task_runners, task_snapshots, tasks

_ARRAY_TYPES = {
    str: "text[]",
    int: "bigint[]",
    bool: "boolean[]",
    bytes: "bytea[]",
    datetime: "timestamptz[]",
}


class _Arrays:
    """The parameters of a statement, one array each: their names, in the order of `$n`."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def array(self, name: str, column: Column[Any]) -> str:
        """`$n::type[]`: the array parameter `name`, of `column`'s values."""
        self.names.append(name)
        kind = column.type
        if isinstance(kind, TypeDecorator):
            kind = kind.impl_instance
        return f"${len(self.names)}::{_ARRAY_TYPES[kind.python_type]}"

    def unnest(self, rows: str, columns: Sequence[Column[Any]]) -> str:
        """`unnest(...) AS v(column, ...)`: the `rows` as a table, one array per column."""
        arrays = ", ".join(self.array(f"{rows}.{column.key}", column) for column in columns)
        return f"unnest({arrays}) AS v({', '.join(column.name for column in columns)})"


def _names(columns: Sequence[Column[Any]]) -> str:
    return ", ".join(column.name for column in columns)


_TRIMMED_FROM = Column("first", BigInteger)
"""The oldest seq a log trim may drop (see `accord.store.sql.batches.trim`)."""
_PREVIOUS_SEQ = Column("previous_seq", BigInteger)
"""The version a save moves a task's row from."""
_HELD_EPOCH = Column("held_epoch", BigInteger)
"""The epoch a save was made under: the row's, or the save changes nothing."""


@functools.cache
def _batch_statement(parts: frozenset[str]) -> tuple[str, list[str]]:
    """The statement that writes a batch with rows for `parts`, and the names of its array
    parameters in order (a part without rows is left out: less to plan and to run).

    A save moves its task's row from `previous_seq` to seq (if the row is still at the
    save's `held_epoch` and not finished: fencing, as `batches.UPDATE_TASK`), or creates it;
    the rows it brings along (its JSON unless it is appended, its event, a log trim, the end
    of its runner) are given for every save and kept only for the tasks written. All of it
    runs on one snapshot in one implicit transaction, so a task may appear in a batch once at
    most (a trim sees the task's `snapshot_seq` from before the save: at worst it keeps
    more). The result names the tasks written.
    """
    arrays = _Arrays()
    changed = [tasks.c[key] for key in TASK_CHANGES]
    new_task = [tasks.c[key] for key in NEW_TASK_COLUMNS]
    task_id, seq, snapshot = tasks.c.id.name, tasks.c.seq.name, tasks.c.snapshot_seq.name
    previous = _PREVIOUS_SEQ.name
    held = (
        f"t.{seq} = v.{previous} AND t.{tasks.c.epoch.name} = v.{_HELD_EPOCH.name}"
        f" AND t.{tasks.c.finished_at.name} IS NULL"
    )
    event_task, event_seq = task_events.c.task_id.name, task_events.c.seq.name
    snapshot_task, json = task_snapshots.c.task_id.name, task_snapshots.c.task.name
    runner_task, runner = task_runners.c.task_id.name, task_runners.c.replica_id.name
    steps: dict[str, str] = {}
    if "moved" in parts:
        steps["updated"] = f"""
    UPDATE {tasks.name} AS t SET {", ".join(f"{c.name} = v.{c.name}" for c in changed)}
    FROM {arrays.unnest("moved", [tasks.c.id, _PREVIOUS_SEQ, _HELD_EPOCH, *changed])}
    WHERE t.{task_id} = v.{task_id} AND {held}
    RETURNING t.{task_id}"""
    if "appended" in parts:
        steps["advanced"] = f"""
    UPDATE {tasks.name} AS t SET {seq} = v.{seq},
        {snapshot} = COALESCE(t.{snapshot}, v.{previous})
    FROM {arrays.unnest("appended", [tasks.c.id, _PREVIOUS_SEQ, _HELD_EPOCH, tasks.c.seq])}
    WHERE t.{task_id} = v.{task_id} AND {held}
    RETURNING t.{task_id}"""
    if "created" in parts:
        steps["created"] = f"""
    INSERT INTO {tasks.name} ({_names(new_task)})
    SELECT * FROM {arrays.unnest("created", new_task)}
    ON CONFLICT ({task_id}) DO NOTHING
    RETURNING {task_id}"""
    steps["written"] = " UNION ALL ".join(f"SELECT {task_id} FROM {step}" for step in steps) or (
        f"SELECT NULL::text AS {task_id} WHERE false"
    )
    if "snapshots" in parts:
        steps["snapshotted"] = f"""
    INSERT INTO {task_snapshots.name} ({_names(list(task_snapshots.c))})
    SELECT * FROM {arrays.unnest("snapshots", list(task_snapshots.c))}
    WHERE v.{snapshot_task} IN (SELECT {task_id} FROM written)
    ON CONFLICT ({snapshot_task}) DO UPDATE SET {json} = excluded.{json}"""
    if "events" in parts:
        steps["logged"] = f"""
    INSERT INTO {task_events.name} ({_names(list(task_events.c))})
    SELECT * FROM {arrays.unnest("events", list(task_events.c))}
    WHERE v.{event_task} IN (SELECT {task_id} FROM written)"""
    if "trims" in parts:
        steps["trimmed"] = f"""
    DELETE FROM {task_events.name} AS e
    USING {arrays.unnest("trims", [task_events.c.task_id, _TRIMMED_FROM, task_events.c.seq])},
        {tasks.name} AS t
    WHERE e.{event_task} = v.{event_task}
        AND e.{event_seq} >= v.{_TRIMMED_FROM.name} AND e.{event_seq} <= v.{event_seq}
        AND t.{task_id} = v.{event_task} AND e.{event_seq} <= COALESCE(t.{snapshot}, v.{event_seq})
        AND v.{event_task} IN (SELECT {task_id} FROM written)"""
    if "claims" in parts:
        steps["claimed"] = f"""
    INSERT INTO {task_runners.name} ({runner_task}, {runner})
    SELECT * FROM {arrays.unnest("claims", list(task_runners.c))}
    ON CONFLICT ({runner_task}) DO UPDATE SET {runner} = excluded.{runner}"""
    if "claims_if_stale" in parts:
        steps["claimed_if_stale"] = f"""
    INSERT INTO {task_runners.name} ({runner_task}, {runner})
    SELECT * FROM {arrays.unnest("claims_if_stale", list(task_runners.c))}
    WHERE v.{runner_task} NOT IN (SELECT {task_id} FROM written)
    ON CONFLICT ({runner_task}) DO UPDATE SET {runner} = excluded.{runner}"""
    if "finished" in parts:
        steps["forgotten"] = f"""
    DELETE FROM {task_runners.name}
    WHERE {runner_task} = ANY({arrays.array("finished", task_runners.c.task_id)})
        AND {runner_task} IN (SELECT {task_id} FROM written)"""
    sql = f"""WITH {", ".join(f"{name} AS ({step})" for name, step in steps.items())}
SELECT {task_id} FROM written"""
    return sql, arrays.names


_STORED_VERSIONS = (
    f"SELECT {tasks.c.id.name}, {tasks.c.seq.name}, {tasks.c.epoch.name},"
    f" {tasks.c.finished_at.name} IS NOT NULL FROM {tasks.name}"
    f" WHERE {tasks.c.id.name} = ANY($1::text[])"
)


def one_write_per_task(batch: Sequence[Write]) -> bool:
    """Whether `write_postgres_batch` can take `batch`: its one statement sees the rows as
    they were before it, so two saves of a task must go one after the other instead (a
    runner claim may come with a save: the batch's last word on a runner is all it writes)."""
    saved = [write.task_id for write in batch if isinstance(write, TaskSave)]
    return len(set(saved)) == len(saved)


async def write_postgres_batch(
    engine: AsyncEngine, batch: Sequence[Write], bound: int | None
) -> list[Outcome]:
    """Write `batch` (one write per task at most) in one statement, hence one transaction.

    Each save keeps its own outcome: the statement reports the tasks it wrote, and a save
    not among them was stale. `bound`: the retention's `max_events_per_task`.
    """
    saves = [write for write in batch if isinstance(write, TaskSave)]
    moved = [save.row for save in saves if save.previous > 0 and not save.appended]
    appended = [save.row for save in saves if save.appended]
    created = [save.row for save in saves if save.previous == 0]
    rows = follow_up(batch, [None] * len(batch), bound)  # as if every save went through
    columns = {
        "moved.id": [row["task_id"] for row in moved],
        "moved.previous_seq": [row["previous_seq"] for row in moved],
        "moved.held_epoch": [row["held_epoch"] for row in moved],
        **{f"moved.{key}": [row[key] for row in moved] for key in TASK_CHANGES},
        "appended.id": [row["task_id"] for row in appended],
        "appended.previous_seq": [row["previous_seq"] for row in appended],
        "appended.held_epoch": [row["held_epoch"] for row in appended],
        "appended.seq": [row["seq"] for row in appended],
        **{f"created.{key}": [row[key] for row in created] for key in NEW_TASK_COLUMNS},
        **{f"snapshots.{c.key}": [row[c.key] for row in rows.snapshots] for c in task_snapshots.c},
        **{f"events.{c.key}": [event[c.key] for event in rows.events] for c in task_events.c},
        "trims.task_id": [trim["trimmed_task"] for trim in rows.trims],
        "trims.first": [trim["trimmed_from"] for trim in rows.trims],
        "trims.seq": [trim["up_to"] for trim in rows.trims],
        **{f"claims.{c.key}": [claim[c.key] for claim in rows.claims] for c in task_runners.c},
        **{
            f"claims_if_stale.{c.key}": [claim[c.key] for claim in rows.claims_if_stale]
            for c in task_runners.c
        },
        "finished": [row["finished"] for row in rows.finished],
    }
    parts = frozenset(name.partition(".")[0] for name, values in columns.items() if values)
    statement, parameters = _batch_statement(parts)
    arrays = [columns[name] for name in parameters]
    async with engine.connect() as connection:
        # asyncpg without SQLAlchemy's statement layer, and outside any transaction of it:
        # the one statement commits on its own.
        driver: Any = (await connection.get_raw_connection()).driver_connection
        try:
            written = {row[0] for row in await driver.fetch(statement, *arrays)}
        except BaseException:
            if driver.is_closed():  # the pool must not hand out a dead connection
                await connection.invalidate()
            raise
        behind = [save.task_id for save in saves if save.task_id not in written]
        try:  # for the errors' messages only: where those rows are now
            rows = await driver.fetch(_STORED_VERSIONS, behind) if behind else []
            stored = {row[0]: (row[1], row[2], row[3]) for row in rows}
        except Exception:  # the batch is committed: its outcomes stand all the same
            stored = {}
    return [
        refused(write, stored.get(write.task_id))
        if isinstance(write, TaskSave) and write.task_id not in written
        else None
        for write in batch
    ]
