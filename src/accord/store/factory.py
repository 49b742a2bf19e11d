"""open_store: the task store a URL names, found by the URL's scheme among registered backends."""

from __future__ import annotations

import re
from collections.abc import Callable

from accord.store.base import TaskStore
from accord.store.memory import InMemoryTaskStore
from accord.store.retention import Retention

MEMORY = "memory"
STORE_DIRECTORY = ".accord"
"""Where `accord serve` keeps an agent's tasks unless told otherwise (`default_store_url`)."""
EARLIER_DEFAULT_STORE = f"{STORE_DIRECTORY}/accord.db"
"""The one file every agent served from a folder shared before each had a file of its own."""


def default_store_url(agent: str) -> str:
    """Where `accord serve` keeps the tasks of the agent named `agent` unless told otherwise:
    a SQLite file of its own under ./.accord/, named after it (`Currency Agent`:
    `sqlite:///.accord/currency-agent.db`), so that agents served from one folder never share
    one. Names that make the same file are told apart by the store (`TaskStore.bind_agent`)."""
    return f"sqlite:///{STORE_DIRECTORY}/{store_file_name(agent)}"


def store_file_name(agent: str) -> str:
    """The file name an agent's default store gets: its name in lower-case ASCII letters and
    digits, other characters as single dashes (at most 64; `agent` when none is left), `.db`."""
    slug = re.sub(r"[^a-z0-9]+", "-", agent.lower()).strip("-")[:64].strip("-")
    return f"{slug or 'agent'}.db"


StoreOpener = Callable[[str, Retention | None], TaskStore]
"""Makes a store (not yet opened) from its URL and retention."""

_BACKENDS: dict[str, StoreOpener] = {}


def register_store(scheme: str, opener: StoreOpener) -> None:
    """Open URLs of `scheme` (`sqlite`, `postgresql+asyncpg`, ...; `memory` is a whole URL)
    with `opener`: how a new backend makes itself known to `open_store` and `--store`."""
    _BACKENDS[scheme] = opener


def open_store(
    url: str, *, retention: Retention | None = None, pool_size: int | None = None
) -> TaskStore:
    """The store at `url`, not yet opened (its `open()` creates or upgrades the schema).

    `memory` keeps everything in this process. `sqlite:///PATH` (relative; four slashes for
    an absolute path) is a SQLite file, its directory created as needed. `postgresql://...`
    (also `postgres://`, `postgresql+asyncpg://`) is PostgreSQL through asyncpg, the
    `postgres` extra. Other schemes are those registered with `register_store`. Raises
    ValueError for a URL naming none of these. `pool_size` bounds the connections of a SQL
    store (see `accord.store.sql.create_sql_engine`), and only of one.
    """
    scheme, separator, _ = url.partition("://")
    if scheme == MEMORY and url != MEMORY:
        raise ValueError(f"the memory store is named just {MEMORY!r}, not {url!r}")
    opener = _BACKENDS.get(url if url == MEMORY else scheme)
    if opener is None:
        known = ", ".join(f"{name}://" for name in sorted(_BACKENDS) if name != MEMORY)
        if not separator:
            raise ValueError(f"{url!r} is not a database URL: use {MEMORY} or {known}...")
        raise ValueError(f"unsupported database URL {url!r}: use {MEMORY} or {known}...")
    if pool_size is not None:
        if opener is not _sql:
            raise ValueError(f"a connection pool is for SQL stores, not {url!r}")
        return _sql(url, retention, pool_size)
    return opener(url, retention)


def _sql(url: str, retention: Retention | None, pool_size: int | None = None) -> TaskStore:
    from accord.store.sql import SqlTaskStore, create_sql_engine  # SQLAlchemy only if needed

    return SqlTaskStore(create_sql_engine(url, pool_size=pool_size), retention=retention)


register_store(MEMORY, lambda url, retention: InMemoryTaskStore(retention))
for _scheme in ("sqlite", "sqlite+aiosqlite", "postgresql", "postgres", "postgresql+asyncpg"):
    register_store(_scheme, _sql)
