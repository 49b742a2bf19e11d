"""DeliveryOutbox: the interface to the outbox of webhook deliveries."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from accord.core.deliveries import Delivery


@dataclass(frozen=True, slots=True)
class OutboxDepth:
    """How many deliveries the outbox holds: `waiting` to be sent (due, retrying or under a
    lease) and `parked` (given up on)."""

    waiting: int
    parked: int


class DeliveryOutbox(ABC):
    """Webhook deliveries saved with the event that caused them (`TaskLog.save`), taken by
    delivery workers on any replica. A queue is a task's deliveries to one webhook (their
    `queue` key): only its oldest unparked delivery is ever handed out, so a webhook gets a
    task's updates in order."""

    @abstractmethod
    async def claim_deliveries(
        self, now: datetime, lease_until: datetime, limit: int
    ) -> list[Delivery]:
        """Take up to `limit` deliveries due at `now`, each the head of its queue, for one
        more try: their `attempts` go up by one and they are not due again before
        `lease_until` (a worker that dies with them leaves them to another then). Two callers
        never get the same delivery for the same lease."""

    @abstractmethod
    async def delivered(self, delivery_id: str) -> None:
        """Remove a delivery that was sent."""

    @abstractmethod
    async def retry_delivery(self, delivery_id: str, next_at: datetime, error: str) -> None:
        """Make a delivery due again at `next_at`, noting why its last try failed."""

    @abstractmethod
    async def park_delivery(
        self, delivery_id: str, now: datetime, error: str, *, with_queue: bool = True
    ) -> int:
        """Give up on a delivery (parked: never tried again, kept to be seen) and, with
        `with_queue`, on the rest of its queue too (a webhook that is gone). How many were
        parked."""

    @abstractmethod
    async def outbox_depth(self) -> OutboxDepth:
        """How many deliveries wait and how many are parked, now."""

    @abstractmethod
    async def parked_deliveries(self, limit: int = 100) -> list[Delivery]:
        """Parked deliveries, most recently parked first."""

    @abstractmethod
    async def requeue_deliveries(
        self,
        now: datetime,
        deadline: datetime,
        *,
        ids: Sequence[str] | None = None,
        task_id: str | None = None,
    ) -> int:
        """Put parked deliveries back in their queues for a new round of tries: those in
        `ids` (None: every parked one), of `task_id` only if given. Their tries start over
        (`attempts` 0, to be delivered by `deadline`); they keep their place in their queue
        and are due at `now`, or, if their queue has an unparked delivery waiting or under a
        lease, no sooner than that one's `next_at`, so a queue never has two under way. How
        many were requeued."""
