"""SharedEventBus: the part of a bus between processes that every transport shares."""

from __future__ import annotations

import logging
import time
from abc import abstractmethod
from collections.abc import Callable
from typing import ClassVar

from accord.core.records import EventRecord
from accord.errors import A2AError
from accord.runtime.bus import EventBus
from accord.types import JSONRPCError, adapters, new_id

log = logging.getLogger("accord.bus")

Entry = dict[bytes, bytes]
"""A record or a cancel request as flat fields, the form every transport carries."""

_KIND, _TASK, _ORIGIN, _PUBLISHED = b"k", b"t", b"o", b"w"
_RECORD, _FAILURE, _CANCEL = b"r", b"e", b"c"


def is_cancel_request(entry: Entry) -> bool:
    """Whether `entry` asks the task's runner to cancel it (else it carries a record)."""
    return entry.get(_KIND) == _CANCEL


class SharedEventBus(EventBus):
    """A bus whose replicas (processes) exchange entries through some transport.

    Local subscribers get a record the moment it is published; the transport carries it to
    the other replicas, which hand it to their own subscribers. Each entry names the replica
    it came from, so one that the transport echoes back is skipped. Subclasses send entries
    (`_send`) and pass what they read to `_receive`.

    A transport can lose an entry (it failed while the runner sent it), and nothing tells
    the replicas that follow the task; the task's log has every record, though (saved before
    published), so their followers read it there: at once when a later record skips past the
    lost one, else once the task stays silent for `log_check_after` seconds (`Follower`).

    With `lag_watchers` (metrics), a record's entry also carries the wall-clock time it was
    published, and each watcher is told, for each record another replica published that is
    handed to a subscriber here, the seconds since (between machines, their clocks' drift
    included).
    """

    distributed: ClassVar[bool] = True
    log_check_after: float | None = 10.0

    def __init__(self) -> None:
        super().__init__()
        self.replica_id = new_id()
        self._origin = self.replica_id.encode()
        self.lag_watchers: list[Callable[[float], None]] = []

    @abstractmethod
    async def _send(self, entry: Entry) -> None:
        """Hand `entry` to the other replicas (logging, not raising, when that fails)."""

    async def publish(self, record: EventRecord) -> None:
        self._deliver_locally(record)
        if record.error is not None:
            entry = {
                _KIND: _FAILURE,
                b"c": str(record.error.code).encode(),
                b"m": record.error.message.encode(),
            }
        else:
            entry = {
                _KIND: _RECORD,
                b"s": str(record.seq).encode(),
                b"f": b"1" if record.final else b"0",
                b"p": record.payload,
            }
            if self.lag_watchers:
                entry[_PUBLISHED] = repr(time.time()).encode()
        await self._send({**entry, _TASK: record.task_id.encode(), _ORIGIN: self._origin})

    async def request_cancel(self, task_id: str) -> None:
        await self._send({_KIND: _CANCEL, _TASK: task_id.encode(), _ORIGIN: self._origin})

    async def _receive(self, entry: Entry) -> None:
        """Act on an entry another replica sent: a cancel request, a failure or a record."""
        if entry.get(_ORIGIN) == self._origin:
            return
        task_id = entry.get(_TASK, b"").decode()
        try:
            kind = entry.get(_KIND)
            if kind == _CANCEL:
                await super().request_cancel(task_id)
            elif kind == _FAILURE:
                error = JSONRPCError(code=int(entry[b"c"]), message=entry[b"m"].decode())
                self._deliver_locally(
                    EventRecord.failure(task_id, A2AError.from_error_object(error))
                )
            elif task_id in self._subscribers:
                payload = entry[b"p"]
                event = adapters.STREAM_EVENT.validate_json(payload)
                final = entry[b"f"] == b"1"
                self._deliver_locally(EventRecord(task_id, int(entry[b"s"]), event, final, payload))
                published = entry.get(_PUBLISHED)
                if published is not None and self.lag_watchers:
                    lag = max(0.0, time.time() - float(published))
                    for watcher in self.lag_watchers:
                        watcher(lag)
        except Exception:
            log.exception("dropping a malformed bus entry for task %s", task_id)
