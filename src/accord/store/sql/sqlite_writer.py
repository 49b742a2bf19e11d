"""The SQLite store's batch writer: its own sqlite3 connection and thread, one hop per batch."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import URL, Boolean, Table
from sqlalchemy.dialects import sqlite

from accord.store.sql.batches import (
    APPEND_TO_TASK,
    ENQUEUE_DELIVERY,
    FORGET_RUNNER,
    LOG_EVENT,
    NEW_TASK_COLUMNS,
    STORED_VERSION,
    TRIM_LOG,
    UPDATE_TASK,
    DialectStatements,
    StoredVersion,
    Write,
    write_batch,
)
from accord.store.sql.engine import tune_sqlite_connection
from accord.store.sql.group_commit import Outcome
from accord.store.sql.rows import TASK_CHANGES
from accord.store.sql.schema import (
    UtcDateTime,
    push_deliveries,
    task_events,
    task_runners,
    task_snapshots,
    tasks,
)

THREAD_NAME = "accord-sqlite-writer"

_DIALECT = sqlite.dialect(paramstyle="qmark")
_STATEMENTS = DialectStatements(sqlite.insert)


def utc_text(value: datetime | None) -> str | None:
    """A timestamp as SQLAlchemy's SQLite dialect stores a `UtcDateTime`: naive UTC text with
    microseconds, which sorts like the instants (a naive value is taken as UTC already)."""
    if value is None:
        return None
    if value.tzinfo is UTC:  # the usual case: its text less "+00:00", cheaper than replace()
        return value.isoformat(" ", "microseconds")[:-6]
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.isoformat(" ", "microseconds")


TimestampTexts = dict[datetime, str | None]
"""The text of each timestamp a batch stored so far: its saves share a few `now`s."""


class _Statement:
    """A batch statement compiled once for sqlite3's positional parameters, and the parameters
    of a row in that order, stored as SQLAlchemy would store them (timestamps as sortable
    text, by `utc_text`), so rows the engine reads back come out right."""

    def __init__(self, statement: Any, table: Table, *column_keys: str) -> None:
        compiled = statement.compile(dialect=_DIALECT, column_keys=list(column_keys) or None)
        self.sql = str(compiled)
        names: list[str] = list(compiled.positiontup or ())
        self._values = itemgetter(*names) if len(names) > 1 else lambda row: (row[names[0]],)
        columns = {column.key: column for column in table.c}
        self._timestamps: list[int] = []
        for at, name in enumerate(names):
            column = columns.get(name)
            if column is None or isinstance(column.type, Boolean):  # a bool binds as 0 or 1
                continue
            if isinstance(column.type, UtcDateTime):
                self._timestamps.append(at)
            elif column.type.dialect_impl(_DIALECT).bind_processor(_DIALECT) is not None:
                raise TypeError(f"{name} needs its value converted: not supported here")

    def parameters(self, row: dict[str, Any], texts: TimestampTexts) -> Sequence[Any]:
        values = self._values(row)
        if not self._timestamps:
            return values
        encoded = list(values)
        for at in self._timestamps:
            value = encoded[at]
            if value is not None:
                text = texts.get(value)
                if text is None:
                    text = texts[value] = utc_text(value)
                encoded[at] = text
        return encoded


_CREATE_TASK = _Statement(_STATEMENTS.create_task, tasks, *NEW_TASK_COLUMNS)
_UPDATE_TASK = _Statement(UPDATE_TASK, tasks, *TASK_CHANGES)
_APPEND_TO_TASK = _Statement(APPEND_TO_TASK, tasks, tasks.c.seq.key)
_STORED_VERSION = _Statement(STORED_VERSION, tasks)
_WRITE_SNAPSHOT = _Statement(
    _STATEMENTS.write_snapshot, task_snapshots, *(column.key for column in task_snapshots.c)
)
_LOG_EVENT = _Statement(LOG_EVENT, task_events)
_ENQUEUE_DELIVERY = _Statement(
    ENQUEUE_DELIVERY, push_deliveries, *(column.key for column in push_deliveries.c)
)
_TRIM_LOG = _Statement(TRIM_LOG, task_events)
_CLAIM_RUNNER = _Statement(
    _STATEMENTS.claim_runner, task_runners, *(column.key for column in task_runners.c)
)
_FORGET_RUNNER = _Statement(FORGET_RUNNER, task_runners)


class _SqliteTarget:
    """A batch written on a sqlite3 connection, in the transaction it has begun."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._texts: TimestampTexts = {}

    def _one(self, statement: _Statement, row: dict[str, Any]) -> sqlite3.Cursor:
        return self._connection.execute(statement.sql, statement.parameters(row, self._texts))

    def _many(self, statement: _Statement, rows: list[dict[str, Any]]) -> None:
        texts = self._texts
        self._connection.executemany(statement.sql, [statement.parameters(r, texts) for r in rows])

    def create_task(self, row: dict[str, Any]) -> bool:
        return self._one(_CREATE_TASK, row).rowcount == 1

    def update_task(self, row: dict[str, Any]) -> bool:
        return self._one(_UPDATE_TASK, row).rowcount == 1

    def append_to_task(self, row: dict[str, Any]) -> bool:
        return self._one(_APPEND_TO_TASK, row).rowcount == 1

    def stored_version(self, task_id: str) -> StoredVersion | None:
        row = self._one(_STORED_VERSION, {"task_id": task_id}).fetchone()
        return (row[0], row[1], bool(row[2])) if row is not None else None

    def write_snapshots(self, rows: list[dict[str, Any]]) -> None:
        self._many(_WRITE_SNAPSHOT, rows)

    def log_events(self, rows: list[dict[str, Any]]) -> None:
        self._many(_LOG_EVENT, rows)

    def enqueue_deliveries(self, rows: list[dict[str, Any]]) -> None:
        self._many(_ENQUEUE_DELIVERY, rows)

    def trim_logs(self, rows: list[dict[str, Any]]) -> None:
        self._many(_TRIM_LOG, rows)

    def claim_runners(self, rows: list[dict[str, Any]]) -> None:
        self._many(_CLAIM_RUNNER, rows)

    def forget_runners(self, rows: list[dict[str, Any]]) -> None:
        self._many(_FORGET_RUNNER, rows)


_Job = tuple[Sequence[Write] | None, int | None, asyncio.AbstractEventLoop, asyncio.Future[Any]]
"""A batch and its bound for the writer thread, and the future its outcomes go to (in the
loop's own thread); no batch: close the connection and end the thread."""


class SqliteBatchWriter:
    """Writes a store's batches to its SQLite file without SQLAlchemy or aiosqlite in the way.

    A thread of its own takes the batches from a queue: it keeps a sqlite3 connection with
    the engine's pragmas, writes each batch in one BEGIN IMMEDIATE ... COMMIT and hands the
    outcomes back to the event loop, one callback a batch. It does not serialize with the
    store's other writers: the caller holds the store's writer lock around `write`. Both
    are made on first use, and made again after `close`. The thread is a daemon: should the
    interpreter end under a batch, the batch was never committed nor reported so.
    """

    def __init__(self, url: URL) -> None:
        if url.database is None:
            raise ValueError(f"{url} names no SQLite file")
        self._database = url.database
        self._uri = bool(url.query.get("uri"))
        self._thread: threading.Thread | None = None
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._connection: sqlite3.Connection | None = None  # used in that thread only

    async def write(self, batch: Sequence[Write], bound: int | None) -> list[Outcome]:
        """Write `batch` in one transaction (see `write_batch`); raises if the transaction fails."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name=THREAD_NAME, daemon=True)
            self._thread.start()
        outcomes: list[Outcome] = await self._call(batch, bound)
        return outcomes

    async def close(self) -> None:
        """Close the connection, then let the thread end (a new `write` starts them again)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        await self._call(None, None)
        thread.join()

    async def _call(self, batch: Sequence[Write] | None, bound: int | None) -> Any:
        """Queue a job for the thread and wait for what it comes to."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()
        self._jobs.put((batch, bound, loop, done))
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            # The thread writes on regardless: stay the file's one writer until it is done.
            await asyncio.wait([done])
            raise

    def _serve(self) -> None:
        while True:
            batch, bound, loop, done = self._jobs.get()
            result: list[Outcome] | None = None
            try:
                if batch is None:
                    self._disconnect()
                else:
                    result = self._write(batch, bound)
            except BaseException as error:
                _settle(loop, done.set_exception, error)
            else:
                _settle(loop, done.set_result, result)
            if batch is None:
                return

    def _write(self, batch: Sequence[Write], bound: int | None) -> list[Outcome]:
        connection = self._connection or self._connect()
        connection.execute("BEGIN IMMEDIATE")
        try:
            outcomes = write_batch(_SqliteTarget(connection), batch, bound)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        return outcomes

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self._database, uri=self._uri)
        try:
            tune_sqlite_connection(connection)
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        return connection

    def _disconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()


def _settle(loop: asyncio.AbstractEventLoop, settle: Callable[[Any], None], value: Any) -> None:
    """Hand a job's result or error to its loop's thread (one callback); a closed loop has
    nobody waiting any more."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settle, value)
