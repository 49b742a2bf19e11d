"""Logged events packed into bytes, as the memory store keeps them: nothing for the GC to walk."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from struct import Struct

from accord.core.records import EventRecord

_HEAD = Struct("<qq?")
"""When an event was logged (microseconds since the epoch), its seq, and whether it was final;
its payload follows."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def packed(record: EventRecord, logged_micros: int) -> bytes:
    """`record` logged at `logged_micros` (see `micros`), as a log keeps it."""
    return _HEAD.pack(logged_micros, record.seq, record.final) + record.payload


def micros(at: datetime) -> int:
    """`at` in microseconds since the epoch, as logged events keep it."""
    return (at - _EPOCH) // _MICROSECOND


def logged_seq(logged: bytes) -> int:
    seq: int = _HEAD.unpack_from(logged)[1]
    return seq


def logged_micros(logged: bytes) -> int:
    """When `logged` was logged, in microseconds since the epoch."""
    at: int = _HEAD.unpack_from(logged)[0]
    return at


def unpacked(task_id: str, logged: bytes) -> EventRecord:
    """The record `packed` made `logged` of."""
    _, seq, final = _HEAD.unpack_from(logged)
    return EventRecord.decoded(task_id, seq, logged[_HEAD.size :], final=final)
