"""DeliveryIds: a receiver's memory of the notifications it handled, to skip repeated ones."""

from __future__ import annotations

import threading
from collections import OrderedDict

from accord.push.verify import Notification


class DeliveryIds:
    """The last `size` delivery ids seen: accord delivers at least once, so a notification can
    arrive again (its answer was lost, or its sender died before recording it) with the same
    delivery id."""

    def __init__(self, size: int = 10_000) -> None:
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def first(self, delivery: Notification | str | None) -> bool:
        """Remember the delivery id of a verified notification (the one its token signs, else
        its header's), or `delivery` itself; False if it was seen before (None, from a sender
        that sends no id, is always new)."""
        delivery_id = delivery.delivery_id if isinstance(delivery, Notification) else delivery
        if delivery_id is None:
            return True
        with self._lock:
            if delivery_id in self._seen:
                return False
            self._seen[delivery_id] = None
            if len(self._seen) > self._size:
                self._seen.popitem(last=False)
            return True
