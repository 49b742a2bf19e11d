"""open_store: the task store a URL names (`memory`, `sqlite:///PATH`, `postgresql://...`)."""

from __future__ import annotations

from accord.store.base import TaskStore
from accord.store.memory import InMemoryTaskStore
from accord.store.retention import Retention

MEMORY = "memory"
DEFAULT_STORE_URL = "sqlite:///.accord/accord.db"
"""Where `accord serve` keeps tasks unless told otherwise: a SQLite file under ./.accord/."""


def open_store(url: str, *, retention: Retention | None = None) -> TaskStore:
    """The store at `url`, not yet opened (its `open()` creates or upgrades the schema).

    `memory` keeps everything in this process. `sqlite:///PATH` (relative; four slashes for
    an absolute path) is a SQLite file, its directory created as needed. `postgresql://...`
    (also `postgres://`, `postgresql+asyncpg://`) is PostgreSQL through asyncpg, the
    `postgres` extra. Raises ValueError for a URL naming none of these.
    """
    if url == MEMORY:
        return InMemoryTaskStore(retention)
    from accord.store.sql import SqlTaskStore, create_sql_engine  # SQLAlchemy only if needed

    return SqlTaskStore(create_sql_engine(url), retention=retention)
