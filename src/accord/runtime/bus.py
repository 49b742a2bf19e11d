"""EventBus: delivers each task's records to everyone watching that task."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable

from accord.runtime.records import EventRecord


class Subscription(AsyncIterator[EventRecord]):
    """The records of one task, in order, from the moment of subscribing until closed."""

    def __init__(self, task_id: str, on_close: Callable[[Subscription], None]) -> None:
        self.task_id = task_id
        self._on_close = on_close
        self._queue: asyncio.Queue[EventRecord] = asyncio.Queue()

    def deliver(self, record: EventRecord) -> None:
        self._queue.put_nowait(record)

    async def __anext__(self) -> EventRecord:
        return await self._queue.get()

    def close(self) -> None:
        """Stop receiving records; safe to call more than once."""
        self._on_close(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class EventBus(ABC):
    """Fan-out of task records to subscribers."""

    @abstractmethod
    def subscribe(self, task_id: str) -> Subscription:
        """Start receiving the records published for `task_id` from now on."""

    @abstractmethod
    async def publish(self, record: EventRecord) -> None:
        """Deliver `record` to every current subscriber of its task."""


class InProcessEventBus(EventBus):
    """The bus of a single server process: direct hand-off to in-memory queues."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[Subscription]] = {}

    def subscribe(self, task_id: str) -> Subscription:
        subscription = Subscription(task_id, self._unsubscribe)
        self._subscribers.setdefault(task_id, set()).add(subscription)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        subscribers = self._subscribers.get(subscription.task_id)
        if subscribers is None:
            return
        subscribers.discard(subscription)
        if not subscribers:
            del self._subscribers[subscription.task_id]

    async def publish(self, record: EventRecord) -> None:
        for subscription in self._subscribers.get(record.task_id, ()):
            subscription.deliver(record)

    def subscriber_count(self, task_id: str) -> int:
        return len(self._subscribers.get(task_id, ()))
