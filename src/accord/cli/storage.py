"""The task store of `accord serve` and `accord db`: its URL, retention, schema upgrades."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

from accord.cli.errors import BadArgument, fail
from accord.store import Retention, StoreOfAnotherAgent, TaskStore, default_store_url, open_store
from accord.store.factory import EARLIER_DEFAULT_STORE, MEMORY, STORE_DIRECTORY

T = TypeVar("T")
OFF = "off"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(?P<amount>\d+(?:\.\d+)?)\s*(?P<unit>[smhd]?)")


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """Where `accord serve` keeps tasks (None: the agent's own file, `default_store_url`) and
    how long."""

    url: str | None = None
    retention: Retention = field(default_factory=Retention)
    pool_size: int | None = None
    """The most connections a SQL store opens (None: the backend's default)."""

    def url_for(self, agent: str) -> str:
        """The store's URL for tasks kept under the agent name `agent`."""
        return self.url if self.url is not None else default_store_url(agent)


def parse_duration(option: str, text: str) -> timedelta | None:
    """`30s`, `15m`, `12h`, `7d` or plain seconds; `off` is None. Raises BadArgument."""
    if text.strip().lower() == OFF:
        return None
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None or float(match["amount"]) <= 0:
        raise BadArgument(f"{option} must be a duration like 30s, 15m, 12h or 7d (or off)")
    return timedelta(seconds=float(match["amount"]) * _UNITS[match["unit"] or "s"])


def format_duration(duration: timedelta | float | None) -> str:
    """The shortest spelling `parse_duration` reads back."""
    if duration is None:
        return OFF
    seconds = duration.total_seconds() if isinstance(duration, timedelta) else duration
    for unit in ("d", "h", "m"):
        if seconds % _UNITS[unit] == 0:
            return f"{seconds // _UNITS[unit]:.0f}{unit}"
    return f"{seconds:g}s"


def prepare_store(url: str, agent: str) -> None:
    """Make the store at `url` ready for `accord serve` to hand to the app of the agent named
    `agent`: its schema created or upgraded, the store bound to the agent.

    Doing this before the server starts turns a bad URL, an unreachable database or a store
    keeping another agent's tasks into one line on stderr rather than a failed startup.
    """
    upgrade_schema(url)

    async def bind() -> None:
        store = open_store(url)
        try:
            await store.bind_agent(agent)
        finally:
            await store.close()

    with _reported(url):
        asyncio.run(bind())


def shared_by_processes(url: str) -> bool:
    """Whether several processes serving the store at `url` see the same tasks."""
    return url != MEMORY and ":memory:" not in url


def named_store(url: str | None) -> str:
    """The store a command managing one works on: `url`, else the only store file ./.accord
    holds (as `accord serve` keeps one agent's tasks); BadArgument when it holds none or
    several."""
    if url is not None:
        return url
    found = sorted(path.name for path in Path(STORE_DIRECTORY).glob("*.db"))
    if len(found) == 1:
        return f"sqlite:///{STORE_DIRECTORY}/{found[0]}"
    held = f"holds {', '.join(found)}" if found else "holds no store"
    raise BadArgument(f"name the task store with --store URL (./{STORE_DIRECTORY} {held})")


def earlier_default_note() -> str | None:
    """What to say when ./.accord/accord.db, where an earlier accord kept the tasks of every
    agent served from this folder, is there: it is no longer anyone's default."""
    if not Path(EARLIER_DEFAULT_STORE).exists():
        return None
    return (
        f"./{EARLIER_DEFAULT_STORE} (where an earlier accord kept tasks) is not used by default"
        f" any more; --store sqlite:///{EARLIER_DEFAULT_STORE} serves this agent on it"
    )


def pool_warning(url: str, pool_size: int | None) -> str | None:
    """What is wrong with the store's connection pool, if anything: a PostgreSQL server
    that cannot give every live replica (this one too) a pool this size."""
    if url == MEMORY:
        return None
    from sqlalchemy.pool import NullPool

    from accord.store.sql import create_sql_engine
    from accord.store.sql.engine import pool_options, sql_url
    from accord.store.sql.pool_fit import pool_fit

    async def check() -> str | None:
        options = pool_options(sql_url(url), pool_size)
        engine = create_sql_engine(url, poolclass=NullPool)
        try:
            fit = await pool_fit(engine, options["pool_size"] + options["max_overflow"])
        finally:
            await engine.dispose()
        return fit.warning() if fit is not None and not fit.fits else None

    with _reported(url):
        return asyncio.run(check())


def upgrade_schema(url: str) -> str:
    """Create or upgrade the schema of the store at `url`; says what it did."""
    if url == MEMORY:  # before SQLAlchemy is loaded, which a memory store never needs
        return "the memory store has no schema"
    from accord.store.sql import SqlTaskStore

    async def upgrade() -> str:
        store = open_store(url)
        if not isinstance(store, SqlTaskStore):
            return f"{url} has no schema"
        try:
            result = await store.upgrade()
        finally:
            await store.close()
        where = display_url(url)
        if result.before == 0:
            return f"created the schema of {where} (version {result.after})"
        if result.changed:
            return f"upgraded {where} from version {result.before} to {result.after}"
        return f"{where} is up to date (version {result.after})"

    with _reported(url):
        return asyncio.run(upgrade())


def using_store(url: str, use: Callable[[TaskStore], Awaitable[T]]) -> T:
    """What `use` returns, run on the store at `url` (opened for it, closed after)."""

    async def run() -> T:
        store = open_store(url)
        try:
            await store.open()
            return await use(store)
        finally:
            await store.close()

    with _reported(url):
        return asyncio.run(run())


@contextmanager
def _reported(url: str) -> Iterator[None]:
    """Turn what can go wrong opening a store into the CLI's one-line errors."""
    try:
        yield
    except (ValueError, ImportError, OverflowError) as exc:  # OverflowError: a port > 65535
        raise BadArgument(f"--store {display_url(url)}: {exc}") from None
    except StoreOfAnotherAgent as exc:
        fail(f"error: {display_url(url)}: {exc}")
    except _failures_opening() as exc:  # called only once something is raised
        reason = _database_reason(exc)
        first_line = str(reason).strip().splitlines()[0] if str(reason).strip() else repr(reason)
        fail(f"error: cannot open the task store {display_url(url)}: {first_line}")


def _failures_opening() -> tuple[type[Exception], ...]:
    """What a store raises when it cannot open: SQLAlchemy is loaded only then, so that a
    memory store never loads it."""
    from sqlalchemy.exc import SQLAlchemyError

    from accord.store.sql import SchemaVersionError

    return OSError, SQLAlchemyError, SchemaVersionError


def _database_reason(exc: Exception) -> BaseException | None:
    """The database driver's own error beneath SQLAlchemy's wrapper, or `exc` itself."""
    from sqlalchemy.exc import DBAPIError

    return exc.orig if isinstance(exc, DBAPIError) else exc


def display_url(url: str) -> str:
    """The store URL with any password hidden."""
    if url == MEMORY:
        return "memory (lost when the server stops)"
    from sqlalchemy import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return url
