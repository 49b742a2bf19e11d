"""The SQL task store: SQLite (the embedded default) and PostgreSQL, with versioned migrations."""

from accord.store.sql.engine import create_sql_engine, sql_url
from accord.store.sql.migrations import SchemaVersionError, UpgradeResult, upgrade
from accord.store.sql.store import SqlTaskStore

__all__ = [
    "SchemaVersionError",
    "SqlTaskStore",
    "UpgradeResult",
    "create_sql_engine",
    "sql_url",
    "upgrade",
]
