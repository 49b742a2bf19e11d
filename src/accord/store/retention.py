"""Retention: how long a task store keeps finished tasks and event logs, and its enforcement."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

log = logging.getLogger("accord.store")

DEFAULT_FINISHED_TASK_TTL = timedelta(days=7)
DEFAULT_EVENT_TTL = timedelta(days=7)
DEFAULT_MAX_EVENTS_PER_TASK = 10_000
DEFAULT_CLEANUP_INTERVAL = 300.0


@dataclass(frozen=True, slots=True)
class Retention:
    """What a store may forget; None keeps that kind of data forever.

    `finished_task_ttl`: how long a task is kept after it reached a terminal state (its
    events and push configs go with it). `event_ttl`: how long a logged event is kept, even
    for a task still going. `max_events_per_task`: the newest events kept in a task's log;
    older ones are dropped as new ones arrive (the SQL stores drop the events of one save
    together, so they may keep up to a save's worth more). Replays that reach back further
    than the log fall back to the task itself.
    """

    finished_task_ttl: timedelta | None = DEFAULT_FINISHED_TASK_TTL
    event_ttl: timedelta | None = DEFAULT_EVENT_TTL
    max_events_per_task: int | None = DEFAULT_MAX_EVENTS_PER_TASK

    def __post_init__(self) -> None:
        for name in ("finished_task_ttl", "event_ttl"):
            ttl = getattr(self, name)
            if ttl is not None and ttl <= timedelta(0):
                raise ValueError(f"{name} must be positive (or None to keep forever)")
        if self.max_events_per_task is not None and self.max_events_per_task < 1:
            raise ValueError("max_events_per_task must be at least 1 (or None for no bound)")


@dataclass(frozen=True, slots=True)
class CleanupReport:
    """What one cleanup removed."""

    tasks: int = 0
    events: int = 0


class Cleanable(Protocol):
    """A store that forgets what its retention says is old (`TaskStore.cleanup`)."""

    async def cleanup(self, now: datetime | None = None) -> CleanupReport: ...


async def clean_periodically(store: Cleanable, interval: float) -> None:
    """Run `store.cleanup()` now and then every `interval` seconds, until cancelled.

    A failed cleanup is logged and tried again at the next interval.
    """
    while True:
        try:
            report = await store.cleanup()
        except Exception:
            log.exception("task store cleanup failed; trying again in %s s", interval)
        else:
            if report.tasks or report.events:
                log.info("cleanup removed %d tasks and %d events", report.tasks, report.events)
        await asyncio.sleep(interval)
