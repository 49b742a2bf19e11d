"""SQL engines for the task store: the URLs it accepts, SQLite tuned for a server, write intent."""

from __future__ import annotations

import importlib.util
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Connection, event, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from accord.store.pools import MAX_OVERFLOW, POOL_SIZE, POSTGRES_POOL_SIZE

WRITES = "accord_writes"
"""Execution option marking an engine whose transactions write (SQLite: BEGIN IMMEDIATE)."""

SQLITE_DRIVER = "sqlite+aiosqlite"
POSTGRES_DRIVER = "postgresql+asyncpg"
SQLITE_BUSY_TIMEOUT_MS = 15_000


_SETTING = re.compile(r"\s*(?:-c\s*|--)(?P<name>[A-Za-z_][\w.]*)=(?P<value>\S*)")
"""One setting in libpq's `options`: `-c name=value`, `-cname=value` or `--name=value`."""

_SQLITE_PRAGMAS = (
    f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}",  # wait for the write lock, don't fail
    "PRAGMA journal_mode=WAL",  # readers never wait for the writer
    "PRAGMA synchronous=NORMAL",  # with WAL: durable across process crashes, fast commits
)
_WAL_SWITCH_ATTEMPTS = 50
"""Switching a fresh file to WAL needs it to itself, and SQLite answers "database is locked"
at once, busy timeout or not, while another connection holds it: retry (10 ms apart)."""


def sql_url(url: str | URL) -> URL:
    """The SQLAlchemy async URL for a store URL: `sqlite:///PATH` or `postgresql://...`.

    `sqlite://` and `sqlite+aiosqlite://` select aiosqlite; `postgresql://`, `postgres://` and
    `postgresql+asyncpg://` select asyncpg (a libpq-style `sslmode` becomes asyncpg's `ssl`).
    Raises ValueError for anything else.
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:  # ValueError: a port that is no number
        raise ValueError(f"{str(url)!r} is not a database URL ({exc})") from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend == "sqlite" and driver in ("", "aiosqlite"):
        if parsed.database in (None, "", ":memory:"):
            raise ValueError(
                "an in-memory SQLite database lives and dies with one connection;"
                " give a file (sqlite:///PATH) or use the memory store"
            )
        return parsed.set(drivername=SQLITE_DRIVER)
    if backend in ("postgresql", "postgres") and driver in ("", "asyncpg"):
        query = dict(parsed.query)
        if "sslmode" in query and "ssl" not in query:
            query["ssl"] = query.pop("sslmode")
        return parsed.set(drivername=POSTGRES_DRIVER, query=query)
    raise ValueError(
        f"unsupported database URL {parsed.render_as_string()!r}: use sqlite:///PATH"
        " (aiosqlite) or postgresql://USER@HOST/DATABASE (asyncpg)"
    )


def create_sql_engine(
    url: str | URL, *, pool_size: int | None = None, **options: Any
) -> AsyncEngine:
    """An AsyncEngine for a store URL (see `sql_url`); `options` go to create_async_engine.

    For SQLite the database file's directory is created, and every connection runs in WAL
    mode with a busy timeout, its transactions begun by SQLAlchemy (so DDL is transactional).
    For PostgreSQL, libpq's `options` parameter (`?options=-csearch_path%3Dtenant`: settings
    for each session, like the schema to use) becomes asyncpg's server settings. Unless
    `options` choose a pool, the engine keeps up to `pool_size` connections open (default:
    POSTGRES_POOL_SIZE for PostgreSQL; for SQLite POOL_SIZE, and up to MAX_OVERFLOW more
    under load: SQLAlchemy's default of 5 made a server with 50 requests in flight open and
    close connections all the time).
    """
    parsed = sql_url(url)
    if parsed.drivername == POSTGRES_DRIVER and importlib.util.find_spec("asyncpg") is None:
        raise ImportError("PostgreSQL needs the asyncpg driver: pip install 'accord[postgres]'")
    if parsed.drivername == POSTGRES_DRIVER and "options" in parsed.query:
        settings = _server_settings(parsed.query["options"])
        parsed = parsed.difference_update_query(["options"])
        connect_args = dict(options.get("connect_args", {}))
        connect_args["server_settings"] = {**settings, **connect_args.get("server_settings", {})}
        options["connect_args"] = connect_args
    if parsed.drivername == SQLITE_DRIVER and not parsed.query.get("uri"):
        assert parsed.database is not None
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    if "poolclass" not in options:
        options = {**pool_options(parsed, pool_size), **options}
    engine = create_async_engine(parsed, **options)
    if parsed.drivername == SQLITE_DRIVER:
        _tune_sqlite(engine)
    return engine


def pool_options(url: URL, pool_size: int | None = None) -> dict[str, int]:
    """The pool of an engine on `url` (an `sql_url`): `pool_size` connections and no more,
    or the backend's default (see `create_sql_engine`)."""
    if pool_size is not None:
        if pool_size < 1:
            raise ValueError(f"a pool needs a connection at least, not {pool_size}")
        return {"pool_size": pool_size, "max_overflow": 0}
    if url.drivername == POSTGRES_DRIVER:
        return {"pool_size": POSTGRES_POOL_SIZE, "max_overflow": 0}
    return {"pool_size": POOL_SIZE, "max_overflow": MAX_OVERFLOW}


def _server_settings(options: str | Sequence[str]) -> dict[str, str]:
    """libpq's `options` (`-c name=value` or `--name=value`, space separated) as a dict.

    Raises ValueError for anything else in it: asyncpg can only pass settings on.
    """
    text = (options if isinstance(options, str) else " ".join(options)).strip()
    settings: dict[str, str] = {}
    position = 0
    while position < len(text):
        match = _SETTING.match(text, position)
        if match is None:
            raise ValueError(
                f"unsupported PostgreSQL options {text!r}: only settings (-c name=value) work"
            )
        settings[match["name"]] = match["value"]
        position = match.end()
    return settings


def writer(engine: AsyncEngine) -> AsyncEngine:
    """The same engine (and pool), for transactions that write."""
    return engine.execution_options(**{WRITES: True})


def tune_sqlite_connection(dbapi_connection: Any) -> None:
    """Set up a DB-API connection to a store's SQLite file (sqlite3's or aiosqlite's adapter):
    WAL, the busy timeout, and transactions begun only by the caller."""
    dbapi_connection.isolation_level = None  # the driver must not BEGIN on its own
    cursor = dbapi_connection.cursor()
    for pragma in _SQLITE_PRAGMAS:
        for attempt in range(_WAL_SWITCH_ATTEMPTS):
            try:
                cursor.execute(pragma)
                break
            except Exception as exc:  # the driver's OperationalError, raised as is
                if "locked" not in str(exc) or attempt == _WAL_SWITCH_ATTEMPTS - 1:
                    raise
                time.sleep(0.01)
    cursor.close()


def _tune_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        tune_sqlite_connection(dbapi_connection)

    @event.listens_for(engine.sync_engine, "begin")
    def on_begin(connection: Connection) -> None:
        # A writer takes the write lock up front: a deferred transaction that read first
        # could not wait for the lock (SQLITE_BUSY) once another writer committed.
        writes = connection.get_execution_options().get(WRITES, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")
