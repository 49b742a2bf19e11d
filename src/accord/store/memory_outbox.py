"""InMemoryOutbox: the outbox of webhook deliveries kept in a dictionary."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from accord.core.deliveries import Delivery
from accord.store.outbox import DeliveryOutbox, OutboxDepth


class InMemoryOutbox(DeliveryOutbox):
    """Deliveries in the order they were saved (which is `seq` order per queue)."""

    def __init__(self) -> None:
        self._outbox: dict[str, Delivery] = {}

    def keep_deliveries(self, deliveries: Iterable[Delivery]) -> None:
        """Add deliveries saved with their event."""
        for delivery in deliveries:
            self._outbox[delivery.id] = delivery

    def forget_deliveries(self, task_ids: Collection[str]) -> None:
        """Drop every delivery of these tasks (forgotten by retention), in one pass."""
        for delivery in [d for d in self._outbox.values() if d.task_id in task_ids]:
            del self._outbox[delivery.id]

    async def claim_deliveries(
        self, now: datetime, lease_until: datetime, limit: int
    ) -> list[Delivery]:
        claimed: list[Delivery] = []
        queues: set[tuple[str, str]] = set()
        for delivery in self._outbox.values():
            queue = (delivery.task_id, delivery.queue)
            if delivery.parked_at is not None or queue in queues:
                continue
            queues.add(queue)  # later ones of this queue wait for this one
            if delivery.next_at <= now and len(claimed) < limit:
                claimed.append(self._replace(delivery.claimed(lease_until)))
        return claimed

    async def delivered(self, delivery_id: str) -> None:
        self._outbox.pop(delivery_id, None)

    async def retry_delivery(self, delivery_id: str, next_at: datetime, error: str) -> None:
        delivery = self._outbox.get(delivery_id)
        if delivery is not None:
            self._replace(replace(delivery, next_at=next_at, last_error=error))

    async def park_delivery(
        self, delivery_id: str, now: datetime, error: str, *, with_queue: bool = True
    ) -> int:
        parked = self._outbox.get(delivery_id)
        if parked is None:
            return 0
        queue = [
            delivery
            for delivery in self._outbox.values()
            if (delivery.task_id, delivery.queue) == (parked.task_id, parked.queue)
            and delivery.parked_at is None
            and ((delivery.seq > parked.seq and with_queue) or delivery is parked)
        ]
        for delivery in queue:
            reason = error if delivery is parked else delivery.last_error or error
            self._replace(replace(delivery, parked_at=now, last_error=reason))
        return len(queue)

    async def outbox_depth(self) -> OutboxDepth:
        parked = sum(delivery.parked_at is not None for delivery in self._outbox.values())
        return OutboxDepth(len(self._outbox) - parked, parked)

    async def parked_deliveries(self, limit: int = 100) -> list[Delivery]:
        parked = [delivery for delivery in self._outbox.values() if delivery.parked_at]
        parked.sort(key=lambda delivery: (delivery.parked_at, delivery.seq), reverse=True)
        return parked[:limit]

    async def requeue_deliveries(
        self,
        now: datetime,
        deadline: datetime,
        *,
        ids: Sequence[str] | None = None,
        task_id: str | None = None,
    ) -> int:
        wanted = None if ids is None else set(ids)
        chosen = [
            delivery
            for delivery in self._outbox.values()
            if delivery.parked_at is not None
            and (wanted is None or delivery.id in wanted)
            and (task_id is None or delivery.task_id == task_id)
        ]
        due_at: dict[tuple[str, str], datetime] = {}  # a queue's unparked ones go first
        for delivery in self._outbox.values():
            if delivery.parked_at is None:
                queue = (delivery.task_id, delivery.queue)
                due_at[queue] = max(due_at.get(queue, now), delivery.next_at)
        for delivery in chosen:  # replaced in place: each keeps its place in its queue
            next_at = due_at.get((delivery.task_id, delivery.queue), now)
            self._replace(
                replace(delivery, attempts=0, next_at=next_at, deadline=deadline, parked_at=None)
            )
        return len(chosen)

    def _replace(self, delivery: Delivery) -> Delivery:
        self._outbox[delivery.id] = delivery
        return delivery
