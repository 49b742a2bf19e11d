"""Delivery: one webhook POST waiting in the store's outbox until it is sent or parked."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Delivery:
    """A notification body made when its event was recorded, and where it goes.

    Deliveries of one task to one webhook (a queue: the same `queue` key, made of the URL and
    the credentials sent to it) go out in `seq` order, one at a time. `attempts` counts the
    tries claimed so far; `next_at` is when it may be tried (again); `deadline` is when it is
    parked if it was not delivered by then; `parked_at` is set once it was given up on, with
    the reason in `last_error`.
    """

    id: str
    task_id: str
    seq: int
    url: str
    queue: str
    config: str
    """The webhook's PushNotificationConfig JSON (token and credentials travel with it)."""
    body: bytes
    media_type: str
    issuer: str
    created_at: datetime
    next_at: datetime
    deadline: datetime
    attempts: int = 0
    last_error: str | None = None
    parked_at: datetime | None = None
    traceparent: str | None = None
    """The W3C trace context of the moment the event was recorded (None: not traced): the
    POST's span continues that trace."""
    tracestate: str | None = None

    @property
    def trace_context(self) -> dict[str, str]:
        """The trace context saved with the delivery, as the headers that carry it."""
        found = {}
        if self.traceparent:
            found["traceparent"] = self.traceparent
            if self.tracestate:
                found["tracestate"] = self.tracestate
        return found

    def claimed(self, lease_until: datetime) -> Delivery:
        """This delivery once a worker took it for one more try, until `lease_until`."""
        return replace(self, attempts=self.attempts + 1, next_at=lease_until)
