"""How many database connections a SQL store opens by default (no SQLAlchemy imported here)."""

POOL_SIZE = 50
"""Connections a SQLite engine keeps open: a server has dozens of requests reading at once."""
MAX_OVERFLOW = 50
"""Connections a SQLite engine opens beyond POOL_SIZE under load, closed again when returned."""
POSTGRES_POOL_SIZE = 20
"""Connections a PostgreSQL engine may have open, all told: each replica of a fleet has its
own, and together they must stay within the server's `max_connections` (100 by default,
3 of them kept for superusers): four replicas take 80."""
