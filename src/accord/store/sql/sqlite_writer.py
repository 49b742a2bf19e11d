"""The SQLite store's batch writer: its own sqlite3 connection and thread, one hop per batch."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import URL, Table
from sqlalchemy.dialects import sqlite

from accord.store.sql.batches import (
    APPEND_TO_TASK,
    ENQUEUE_DELIVERY,
    FORGET_RUNNER,
    LOG_EVENT,
    NEW_TASK_COLUMNS,
    STORED_SEQ,
    TRIM_LOG,
    UPDATE_TASK,
    DialectStatements,
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

# sqlite3 takes named parameters from the dicts the batch holds as they are.
_DIALECT = sqlite.dialect(paramstyle="named")
_STATEMENTS = DialectStatements(sqlite.insert)


def _sql(statement: Any, *column_keys: str) -> str:
    """A batch statement's SQL, compiled once (`column_keys`: the columns an INSERT/UPDATE sets)."""
    return str(statement.compile(dialect=_DIALECT, column_keys=list(column_keys) or None))


_CREATE_TASK = _sql(_STATEMENTS.create_task, *NEW_TASK_COLUMNS)
_UPDATE_TASK = _sql(UPDATE_TASK, *TASK_CHANGES)
_APPEND_TO_TASK = _sql(APPEND_TO_TASK, tasks.c.seq.key)
_STORED_SEQ = _sql(STORED_SEQ)
_WRITE_SNAPSHOT = _sql(_STATEMENTS.write_snapshot, *(column.key for column in task_snapshots.c))
_LOG_EVENT = _sql(LOG_EVENT)
_ENQUEUE_DELIVERY = _sql(ENQUEUE_DELIVERY, *(column.key for column in push_deliveries.c))
_TRIM_LOG = _sql(TRIM_LOG)
_CLAIM_RUNNER = _sql(_STATEMENTS.claim_runner, *(column.key for column in task_runners.c))
_FORGET_RUNNER = _sql(FORGET_RUNNER)


def utc_text(value: datetime | None) -> str | None:
    """A timestamp as SQLAlchemy's SQLite dialect stores a `UtcDateTime`: naive UTC text with
    microseconds, which sorts like the instants (a naive value is taken as UTC already)."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = (value if value.tzinfo is UTC else value.astimezone(UTC)).replace(tzinfo=None)
    return value.isoformat(" ", "microseconds")


def _encoder(table: Table) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The copy of a row that sqlite3 stores as SQLAlchemy would (timestamps as sortable text).

    The column types' own bind processors do it, so rows the engine reads back come out
    right; timestamps take `utc_text`, the same text at a fraction of the processors' cost.
    """
    processors = [
        (column.key, utc_text if isinstance(column.type, UtcDateTime) else processor)
        for column in table.c
        if (processor := column.type.dialect_impl(_DIALECT).bind_processor(_DIALECT)) is not None
    ]

    def encode(row: dict[str, Any]) -> dict[str, Any]:
        encoded = dict(row)  # a failed batch is retried with the same rows
        for key, process in processors:
            if key in encoded:
                encoded[key] = process(encoded[key])
        return encoded

    return encode


_TASK_ROW = _encoder(tasks)
_EVENT_ROW = _encoder(task_events)
_DELIVERY_ROW = _encoder(push_deliveries)


class _SqliteTarget:
    """A batch written on a sqlite3 connection, in the transaction it has begun."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def create_task(self, row: dict[str, Any]) -> bool:
        return self._connection.execute(_CREATE_TASK, _TASK_ROW(row)).rowcount == 1

    def update_task(self, row: dict[str, Any]) -> bool:
        return self._connection.execute(_UPDATE_TASK, _TASK_ROW(row)).rowcount == 1

    def append_to_task(self, row: dict[str, Any]) -> bool:
        return self._connection.execute(_APPEND_TO_TASK, row).rowcount == 1

    def stored_seq(self, task_id: str) -> int | None:
        row = self._connection.execute(_STORED_SEQ, {"task_id": task_id}).fetchone()
        return row[0] if row is not None else None

    def write_snapshots(self, rows: list[dict[str, Any]]) -> None:
        self._connection.executemany(_WRITE_SNAPSHOT, rows)

    def log_events(self, rows: list[dict[str, Any]]) -> None:
        self._connection.executemany(_LOG_EVENT, [_EVENT_ROW(row) for row in rows])

    def enqueue_deliveries(self, rows: list[dict[str, Any]]) -> None:
        self._connection.executemany(_ENQUEUE_DELIVERY, [_DELIVERY_ROW(row) for row in rows])

    def trim_logs(self, rows: list[dict[str, Any]]) -> None:
        self._connection.executemany(_TRIM_LOG, rows)

    def claim_runners(self, rows: list[dict[str, Any]]) -> None:
        self._connection.executemany(_CLAIM_RUNNER, rows)

    def forget_runners(self, rows: list[dict[str, Any]]) -> None:
        self._connection.executemany(_FORGET_RUNNER, rows)


class SqliteBatchWriter:
    """Writes a store's batches to its SQLite file without SQLAlchemy or aiosqlite in the way.

    Each batch is one call into a thread of its own, which keeps a sqlite3 connection with
    the engine's pragmas and writes the whole batch in one BEGIN IMMEDIATE ... COMMIT. It
    does not serialize with the store's other writers: the caller holds the store's writer
    lock around `write`. Both are made on first use, and made again after `close`.
    """

    def __init__(self, url: URL) -> None:
        if url.database is None:
            raise ValueError(f"{url} names no SQLite file")
        self._database = url.database
        self._uri = bool(url.query.get("uri"))
        self._thread: ThreadPoolExecutor | None = None
        self._connection: sqlite3.Connection | None = None  # used in that thread only

    async def write(self, batch: Sequence[Write], bound: int | None) -> list[Outcome]:
        """Write `batch` in one transaction (see `write_batch`); raises if the transaction fails."""
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix=THREAD_NAME)
        loop = asyncio.get_running_loop()
        written = loop.run_in_executor(self._thread, self._write, batch, bound)
        try:
            return await asyncio.shield(written)
        except asyncio.CancelledError:
            # The thread writes on regardless: stay the file's one writer until it is done.
            await asyncio.wait([written])
            raise

    async def close(self) -> None:
        """Close the connection, then let the thread end (a new `write` starts them again)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        await asyncio.get_running_loop().run_in_executor(thread, self._disconnect)
        thread.shutdown()

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
