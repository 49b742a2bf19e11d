"""EventBus: delivers each task's records to everyone watching that task."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from typing import ClassVar

from accord.core.records import EventRecord
from accord.errors import RateLimited

MAX_PENDING_RECORDS = 1024
MAX_PENDING_BYTES = 32 * 1024 * 1024


class StreamOverrun(RateLimited):
    """A subscriber fell too far behind its task's records (a client that does not read its
    stream): its stream ends with this error, and it can resume from the task's log."""


class Subscription(AsyncIterator[EventRecord]):
    """The records of one task, in order, from the moment of subscribing until closed, for
    one reader.

    Records wait for a slow reader up to `MAX_PENDING_RECORDS` records or
    `MAX_PENDING_BYTES` bytes; past either, the waiting records are dropped and the reader
    gets StreamOverrun, naming the last event it read (its Last-Event-ID to resume with).
    """

    def __init__(self, task_id: str, on_close: Callable[[Subscription], None]) -> None:
        self.task_id = task_id
        self._on_close = on_close
        # None wakes a reader whose stream was interrupted (`interrupt`).
        self._pending: deque[EventRecord | None] = deque()
        # What its one reader awaits while nothing is pending.
        self._waiter: asyncio.Future[None] | None = None
        # Set by a subscriber that only needs the end (a blocking send): the records before
        # it are dropped instead of waking the subscriber once each.
        self.finals_only = False
        self._pending_bytes = 0
        self._last_read = 0
        self._overrun = False

    def deliver(self, record: EventRecord) -> None:
        if self._overrun or (self.finals_only and not record.final):
            return
        self._pending_bytes += len(record.payload)
        if len(self._pending) >= MAX_PENDING_RECORDS or self._pending_bytes > MAX_PENDING_BYTES:
            self._overrun = True  # from now on records are ignored, until the reader closes
            self._drop_pending()
            self._put(record)  # wakes the reader, which then gets the error
            return
        self._put(record)

    def _put(self, record: EventRecord | None) -> None:
        self._pending.append(record)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def __anext__(self) -> EventRecord:
        while not self._pending:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        record = self._pending.popleft()
        if self._overrun:
            raise StreamOverrun(
                "this stream fell too far behind its task's events and was ended; resubscribe"
                f" with Last-Event-ID: {self._last_read} to get the rest",
                data={"lastEventId": self._last_read},
            )
        assert record is not None  # only `interrupt` puts None, after setting _overrun
        self._pending_bytes -= len(record.payload)
        if record.seq:
            self._last_read = record.seq
        return record

    @property
    def pending(self) -> int:
        """How many records wait for the reader."""
        return len(self._pending)

    def interrupt(self) -> None:
        """End the reader's stream now, as if it had fallen behind: records may have been
        missed (its bus lost the other replicas), and the reader resumes from the task's log."""
        if not self._overrun:
            self._overrun = True
            self._drop_pending()
            self._put(None)

    def _drop_pending(self) -> None:
        self._pending.clear()
        self._pending_bytes = 0

    def close(self) -> None:
        """Stop receiving records; safe to call more than once."""
        self._on_close(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


CancelHandler = Callable[[str], Awaitable[None]]


class EventBus(ABC):
    """Fan-out of task records to subscribers, and of cancel requests to the task's runner.

    Subscribers are always local to the process; a distributed bus also carries records
    published by other replicas to them, and cancel requests to whichever replica runs the
    task.
    """

    distributed: ClassVar[bool] = False
    system: ClassVar[str] = "in_process"
    """The transport, as telemetry names it (OpenTelemetry's `messaging.system`)."""
    log_check_after: float | None = None
    """How long a follower of a task waits for its next record before it checks the task's
    log for one this bus lost; None: the bus loses none (its subscribers are all local)."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[Subscription]] = {}
        self._cancel_handler: CancelHandler | None = None

    def subscribe(self, task_id: str) -> Subscription:
        """Start receiving the records published for `task_id` from now on."""
        subscription = Subscription(task_id, self._unsubscribe)
        self._subscribers.setdefault(task_id, set()).add(subscription)
        return subscription

    @abstractmethod
    async def publish(self, record: EventRecord) -> None:
        """Deliver `record` to every current subscriber of its task, wherever they are."""

    def running(self, task_id: str) -> AbstractContextManager[None]:
        """Held while this replica runs `task_id`: a bus that reads only what a replica needs
        then carries the task's cancel requests here."""
        return nullcontext()

    def on_cancel_request(self, handler: CancelHandler) -> None:
        """Call `handler(task_id)` when some replica asks for a task to be canceled."""
        self._cancel_handler = handler

    async def request_cancel(self, task_id: str) -> None:
        """Ask the replica running `task_id` to cancel it (here: this process)."""
        if self._cancel_handler is not None:
            await self._cancel_handler(task_id)

    async def start(self) -> None:
        """Connect; the default has nothing to connect to."""

    async def close(self) -> None:
        """Disconnect; the default has nothing to disconnect."""

    async def check(self) -> None:
        """Raise if the bus cannot be reached now (a readiness probe); the default always can."""

    def subscriber_count(self, task_id: str) -> int:
        return len(self._subscribers.get(task_id, ()))

    def _deliver_locally(self, record: EventRecord) -> None:
        for subscription in self._subscribers.get(record.task_id, ()):
            subscription.deliver(record)

    def _interrupt_subscribers(self) -> None:
        """End every local subscriber's stream (see `Subscription.interrupt`)."""
        for subscriptions in list(self._subscribers.values()):
            for subscription in list(subscriptions):
                subscription.interrupt()

    def _unsubscribe(self, subscription: Subscription) -> None:
        subscribers = self._subscribers.get(subscription.task_id)
        if subscribers is None:
            return
        subscribers.discard(subscription)
        if not subscribers:
            del self._subscribers[subscription.task_id]


class InProcessEventBus(EventBus):
    """The bus of a single server process: direct hand-off to in-memory queues."""

    async def publish(self, record: EventRecord) -> None:
        self._deliver_locally(record)
