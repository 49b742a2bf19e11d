"""SqlOutbox: the outbox of webhook deliveries in SQL, claimed by workers on any replica."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, delete, func, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from accord.core.deliveries import Delivery
from accord.store.outbox import DeliveryOutbox, OutboxDepth
from accord.store.sql.database import SqlDatabase
from accord.store.sql.rows import delivery
from accord.store.sql.schema import (
    push_deliveries,
)


class SqlOutbox(DeliveryOutbox):
    """Deliveries are rows; a claim is a compare-and-set on the heads of their queues
    (PostgreSQL: rows another replica holds locked are skipped)."""

    db: SqlDatabase

    async def claim_deliveries(
        self, now: datetime, lease_until: datetime, limit: int
    ) -> list[Delivery]:
        earlier = aliased(push_deliveries)
        head = ~(
            select(earlier.c.id)
            .where(
                earlier.c.task_id == push_deliveries.c.task_id,
                earlier.c.queue == push_deliveries.c.queue,
                earlier.c.seq < push_deliveries.c.seq,
                earlier.c.parked_at.is_(None),
            )
            .exists()
        )
        due = push_deliveries.c.parked_at.is_(None) & (push_deliveries.c.next_at <= now)
        candidates = (
            select(push_deliveries.c.id)
            .where(due, head)
            .order_by(push_deliveries.c.next_at)
            .limit(limit)
        )
        if self.db.dialect == "postgresql":  # replicas claim different rows
            locked = candidates.with_for_update(skip_locked=True)
            async with self.db.writing() as connection:
                ids = list((await connection.execute(locked)).scalars())
                return await self._claim(connection, ids, due, lease_until)
        # SQLite: found without the writer's lock, so an idle poll does not hold up saves.
        async with self.db.reading() as connection:
            ids = list((await connection.execute(candidates)).scalars())
        if not ids:
            return []
        async with self.db.writing() as connection:  # still heads: a requeue may have come first
            return await self._claim(connection, ids, due & head, lease_until)

    async def _claim(
        self,
        connection: AsyncConnection,
        ids: list[str],
        due: ColumnElement[bool],
        lease_until: datetime,
    ) -> list[Delivery]:
        if not ids:
            return []
        # Compare-and-set: a row another process claimed meanwhile is no longer due.
        result = await connection.execute(
            update(push_deliveries)
            .where(push_deliveries.c.id.in_(ids), due)
            .values(attempts=push_deliveries.c.attempts + 1, next_at=lease_until)
            .returning(*push_deliveries.c)
        )
        return [delivery(row) for row in result]

    async def delivered(self, delivery_id: str) -> None:
        async with self.db.writing() as connection:
            await connection.execute(
                delete(push_deliveries).where(push_deliveries.c.id == delivery_id)
            )

    async def retry_delivery(self, delivery_id: str, next_at: datetime, error: str) -> None:
        async with self.db.writing() as connection:
            await connection.execute(
                update(push_deliveries)
                .where(push_deliveries.c.id == delivery_id)
                .values(next_at=next_at, last_error=error)
            )

    async def park_delivery(
        self, delivery_id: str, now: datetime, error: str, *, with_queue: bool = True
    ) -> int:
        async with self.db.writing() as connection:
            queue = (push_deliveries.c.task_id, push_deliveries.c.queue, push_deliveries.c.seq)
            unparked = push_deliveries.c.parked_at.is_(None)
            found = await connection.execute(
                select(*queue).where(push_deliveries.c.id == delivery_id, unparked)
            )
            parked = found.first()
            if parked is None:
                return 0
            await connection.execute(
                update(push_deliveries)
                .where(push_deliveries.c.id == delivery_id)
                .values(parked_at=now, last_error=error)
            )
            if not with_queue:
                return 1
            rest = await connection.execute(
                update(push_deliveries)
                .where(
                    push_deliveries.c.task_id == parked.task_id,
                    push_deliveries.c.queue == parked.queue,
                    push_deliveries.c.seq > parked.seq,
                    push_deliveries.c.parked_at.is_(None),
                )
                .values(
                    parked_at=now,
                    last_error=func.coalesce(push_deliveries.c.last_error, error),
                )
            )
        return 1 + rest.rowcount

    async def outbox_depth(self) -> OutboxDepth:
        parked = push_deliveries.c.parked_at.is_not(None)
        async with self.db.reading() as connection:
            result = await connection.execute(
                select(parked, func.count()).select_from(push_deliveries).group_by(parked)
            )
            counts = {bool(is_parked): count for is_parked, count in result}
        return OutboxDepth(counts.get(False, 0), counts.get(True, 0))

    async def parked_deliveries(self, limit: int = 100) -> list[Delivery]:
        async with self.db.reading() as connection:
            result = await connection.execute(
                select(push_deliveries)
                .where(push_deliveries.c.parked_at.is_not(None))
                .order_by(push_deliveries.c.parked_at.desc(), push_deliveries.c.seq.desc())
                .limit(limit)
            )
            return [delivery(row) for row in result]

    async def requeue_deliveries(
        self,
        now: datetime,
        deadline: datetime,
        *,
        ids: Sequence[str] | None = None,
        task_id: str | None = None,
    ) -> int:
        outbox = push_deliveries.c
        chosen: ColumnElement[bool] = outbox.parked_at.is_not(None)
        if ids is not None:
            chosen &= outbox.id.in_(ids)
        if task_id is not None:
            chosen &= outbox.task_id == task_id
        # A queue's unparked deliveries go first: one may be under a lease, its claimer's until
        # it runs out (locked here, so a claim committing meanwhile is waited for and seen).
        pending = select(outbox.task_id, outbox.queue, outbox.next_at).where(
            outbox.parked_at.is_(None),
            tuple_(outbox.task_id, outbox.queue).in_(
                select(outbox.task_id, outbox.queue).where(chosen)
            ),
        )
        if self.db.dialect == "postgresql":
            pending = pending.with_for_update()
        fresh = {"attempts": 0, "deadline": deadline, "parked_at": None}
        async with self.db.writing() as connection:
            due_at: dict[tuple[str, str], datetime] = {}
            for row in await connection.execute(pending):
                queue = (row.task_id, row.queue)
                due_at[queue] = max(due_at.get(queue, now), row.next_at)
            requeued = 0
            for (task, webhook), next_at in due_at.items():
                behind = chosen & (outbox.task_id == task) & (outbox.queue == webhook)
                result = await connection.execute(
                    update(push_deliveries).where(behind).values(next_at=next_at, **fresh)
                )
                requeued += result.rowcount
            # The rest are in queues with nothing pending: due now.
            result = await connection.execute(
                update(push_deliveries).where(chosen).values(next_at=now, **fresh)
            )
        return requeued + result.rowcount
