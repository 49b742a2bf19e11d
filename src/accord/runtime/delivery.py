"""DeliveryWorker: sends the store's outbox of webhook deliveries, at least once, in order."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from accord.core import outbound
from accord.core.deliveries import Delivery
from accord.core.push import PushTarget
from accord.core.records import EventRecord
from accord.runtime.push import Attempt, PushSender, notification_bodies
from accord.store import TaskStore
from accord.types import Task, new_id

log = logging.getLogger("accord.push")


@dataclass(frozen=True, slots=True)
class RetrySchedule:
    """How often and how long a delivery is tried before it is parked.

    Try n+1 waits `first_delay * 2**(n-1)` seconds (at most `max_delay`) after try n failed,
    less a random part of up to `jitter` of it (so receivers that come back are not hit by
    every sender at once); after `attempts` tries, or once the next try would come after
    `deadline` seconds from the event, the delivery is parked.
    """

    attempts: int = 8
    first_delay: float = 1.0
    max_delay: float = 300.0
    jitter: float = 0.5
    deadline: float = 24 * 3600.0
    request_timeout: float = 15.0
    """The whole of one try: resolving, connecting and the answer (the sender's HTTP timeout
    applies to each step within)."""

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {self.attempts}")
        for name in ("first_delay", "max_delay", "deadline", "request_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter must be between 0 and 1, got {self.jitter}")

    def delay(self, attempts: int) -> float:
        """Seconds before the try after the `attempts`-th one."""
        base: float = min(self.max_delay, self.first_delay * 2 ** (attempts - 1))
        return base * (1 - self.jitter * random.random())


def webhook_key(target: PushTarget) -> str:
    """What tells one webhook from another: its URL and what is sent to it (not the config's
    id, which an inline config gets only once saved)."""
    config = target.config
    auth = config.authentication
    parts = [config.url, config.token or "", auth.to_json().decode() if auth else ""]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


class DeliveryWorker:
    """Takes due deliveries from the outbox and POSTs them through a PushSender.

    Only the head of each queue (a task's deliveries to one webhook) is ever claimed, so a
    webhook gets a task's notifications in order; different queues go out side by side (up to
    `concurrency` POSTs at once), so a slow or dead webhook holds up no other. A claim is a
    lease: if this process dies with a delivery in hand, the delivery is due again when the
    lease runs out, for whichever replica claims it then (at least once: the receiver dedupes
    on the delivery id). The worker wakes when a save with deliveries commits, when a retry
    is due, and every `poll` seconds for what other processes left.
    """

    def __init__(
        self,
        store: TaskStore,
        sender: PushSender,
        *,
        schedule: RetrySchedule | None = None,
        poll: float = 2.0,
        concurrency: int = 32,
    ) -> None:
        self.store = store
        self.sender = sender
        self.schedule = schedule if schedule is not None else RetrySchedule()
        self.poll = poll
        self.concurrency = concurrency
        self._wake = asyncio.Event()
        self._in_flight: set[asyncio.Task[None]] = set()
        self._loop: asyncio.Task[None] | None = None
        self.outcome_watchers: list[Callable[[str, int], None]] = []
        """Told how each try of a delivery ended, with how many deliveries it concerns:
        `delivered` (1), `retried` (1: due again later) or `parked` (it and, for a webhook
        given up on, the rest of its queue)."""

    @property
    def lease(self) -> timedelta:
        """How long a claimed delivery stays with its claimer: a try, with room to spare."""
        return timedelta(seconds=2 * self.schedule.request_timeout + 5)

    @property
    def busy(self) -> bool:
        """Whether a delivery is under way or the worker was woken to look for one."""
        return bool(self._in_flight) or self._wake.is_set()

    def outbox(
        self, task_id: str, seq: int, targets: Sequence[PushTarget], record: EventRecord, task: Task
    ) -> list[Delivery]:
        """The deliveries of `record` to `targets`, bodies made now, to save with the event."""
        now = datetime.now(UTC)
        deadline = now + timedelta(seconds=self.schedule.deadline)
        trace: dict[str, str] = {}
        outbound.inject(trace)  # the trace of the request being served, when traced
        return [
            Delivery(
                id=new_id(),
                task_id=task_id,
                seq=seq,
                url=target.config.url,
                queue=webhook_key(target),
                config=target.config.to_json().decode(),
                body=body,
                media_type=media_type,
                issuer=self.sender.issuer or "",
                created_at=now,
                next_at=now,
                deadline=deadline,
                traceparent=trace.get("traceparent"),
                tracestate=trace.get("tracestate"),
            )
            for target, body, media_type in notification_bodies(task_id, targets, record, task)
        ]

    def wake(self) -> None:
        """Look for due deliveries now (a save with deliveries committed, a queue moved on)."""
        self._wake.set()

    def start(self) -> None:
        """Start delivering, beginning with what the outbox holds already."""
        if self._loop is None:
            self._wake.set()
            self._loop = asyncio.create_task(self._run(), name="accord-push-deliveries")

    async def close(self) -> None:
        """Stop: deliveries under way are abandoned to their lease (tried again later)."""
        tasks = [*self._in_flight, *([self._loop] if self._loop else [])]
        self._loop = None
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll)
            room = self.concurrency - len(self._in_flight)
            if room <= 0:
                continue  # a finishing delivery wakes the worker
            self._wake.clear()
            now = datetime.now(UTC)
            try:
                claimed = await self.store.claim_deliveries(now, now + self.lease, room)
            except Exception:  # the store is away: try again at the next poll
                log.exception("could not claim push deliveries")
                continue
            for delivery in claimed:
                sending = asyncio.create_task(self._deliver(delivery))
                self._in_flight.add(sending)
                sending.add_done_callback(self._done)
            if len(claimed) == room:
                self._wake.set()  # there may be more

    def _done(self, sending: asyncio.Task[None]) -> None:
        self._in_flight.discard(sending)
        self._wake.set()  # its queue may have a next delivery, and there is room again

    async def _deliver(self, delivery: Delivery) -> None:
        try:
            attempt = await asyncio.wait_for(
                self.sender.attempt(delivery), self.schedule.request_timeout
            )
        except TimeoutError:
            attempt = Attempt(False, retry=True, problem="no answer in time")
        except Exception as exc:  # a bug must not lose the delivery: it is retried as a failure
            log.exception("push delivery %s failed", delivery.id)
            attempt = Attempt(False, retry=True, problem=f"{type(exc).__name__}: {exc}")
        try:
            await self._settle(delivery, attempt)
        except Exception:  # the lease runs out and the delivery is tried again
            log.exception("could not record how push delivery %s went", delivery.id)

    async def _settle(self, delivery: Delivery, attempt: Attempt) -> None:
        if attempt.delivered:
            await self.store.delivered(delivery.id)
            self._tell("delivered", 1)
            return
        now = datetime.now(UTC)
        delay = self.schedule.delay(delivery.attempts)
        next_at = now + timedelta(seconds=delay)
        if (
            attempt.retry
            and delivery.attempts < self.schedule.attempts
            and (next_at < delivery.deadline)
        ):
            await self.store.retry_delivery(delivery.id, next_at, attempt.problem)
            self._tell("retried", 1)
            asyncio.get_running_loop().call_later(delay, self._wake.set)
            return
        # A webhook that refused this notification may take the next; one that kept failing
        # is given up on with the rest of its queue, which could not go out in order anyway.
        parked = await self.store.park_delivery(
            delivery.id, now, attempt.problem, with_queue=attempt.retry
        )
        self._tell("parked", parked)
        log.warning(
            "push to %s for task %s parked after %d tries (%s); %d notification(s) parked",
            delivery.url, delivery.task_id, delivery.attempts, attempt.problem, parked,
        )  # fmt: skip

    def _tell(self, outcome: str, deliveries: int) -> None:
        for watcher in self.outcome_watchers:
            watcher(outcome, deliveries)
