"""Whether a fleet's PostgreSQL pools fit the server: replicas times pool in max_connections."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from accord.store.sql.schema import replicas


@dataclass(frozen=True, slots=True)
class PoolFit:
    """The connections a fleet's pools may open, against what the server allows."""

    pool: int
    """The most connections one replica opens."""
    replicas: int
    """The replicas alive, this one included."""
    max_connections: int
    reserved: int
    """Connections the server keeps for superusers (`superuser_reserved_connections`)."""

    @property
    def available(self) -> int:
        return self.max_connections - self.reserved

    @property
    def fits(self) -> bool:
        return self.pool * self.replicas <= self.available

    def warning(self) -> str:
        """What to tell whoever starts the replica when the pools do not fit."""
        fleet = f"{self.replicas} replicas x " if self.replicas > 1 else ""
        return (
            f"{fleet}a pool of {self.pool} may open {self.pool * self.replicas} connections,"
            f" more than the {self.available} PostgreSQL allows (max_connections"
            f" {self.max_connections}, {self.reserved} reserved): lower --store-pool or raise"
            " max_connections"
        )


async def pool_fit(engine: AsyncEngine, pool: int) -> PoolFit | None:
    """How pools of `pool` connections, one per live replica and one more, fit the server
    behind `engine` (None for SQLite, which has no such limit). Reads `max_connections` and
    the replicas' heartbeats once."""
    if engine.dialect.name != "postgresql":
        return None
    async with engine.connect() as connection:
        limit = await connection.scalar(text("SHOW max_connections"))
        reserved = await connection.scalar(text("SHOW superuser_reserved_connections"))
        alive = select(func.count()).where(replicas.c.alive_until > datetime.now(UTC))
        others = await connection.scalar(alive)
    return PoolFit(pool, (others or 0) + 1, int(limit), int(reserved))
