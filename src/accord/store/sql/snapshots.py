"""Which saves of the SQL store rewrite a task's JSON, and which only append an artifact chunk."""

from __future__ import annotations

from dataclasses import dataclass

from accord.core.records import EventRecord
from accord.types import TaskArtifactUpdateEvent

MIN_TAIL_BYTES = 64 * 1024
"""Event bytes a small task's log tail may reach before its JSON is written again."""
TAIL_PER_SNAPSHOT = 4
"""How many times its JSON's size a task's log tail may reach before the JSON is written
again. A chunk's event is several times the bytes it adds to the JSON (its envelope): with 1,
the JSON of a stream of small chunks would be written about seven times its final size."""


@dataclass(slots=True)
class _Tail:
    snapshot_bytes: int
    bytes: int = 0
    events: int = 0


class SnapshotPolicy:
    """Decides for each save whether the task's row gets its JSON (a snapshot) or only the new
    `seq`, the event joining the log tail that reads fold into the snapshot.

    Only artifact updates join a tail, and only for a task whose snapshot this store wrote
    (so it knows its size). A tail stays within TAIL_PER_SNAPSHOT times its snapshot (or
    MIN_TAIL_BYTES) and shorter than the log's retention bound: the snapshots of a long
    stream add up to a small multiple of its events, a read folds in a bounded tail, and
    trimming the log never reaches into a tail. What the policy knows is only a guide: a save
    that failed makes it forget the task, whose next save is a snapshot again.
    """

    def __init__(self, max_events: int | None) -> None:
        self.max_events = max_events
        self._tails: dict[str, _Tail] = {}

    def appends(self, task_id: str, seq: int, record: EventRecord | None) -> bool:
        """Whether the save of `record` at `seq` only appends it (if so, counted from now)."""
        tail = self._tails.get(task_id)
        if tail is None or record is None or record.seq != seq:
            return False
        if not isinstance(record.event, TaskArtifactUpdateEvent):
            return False
        size = len(record.payload)
        if tail.bytes + size > max(TAIL_PER_SNAPSHOT * tail.snapshot_bytes, MIN_TAIL_BYTES):
            return False
        if self.max_events is not None and tail.events + 1 >= self.max_events:
            return False
        tail.bytes += size
        tail.events += 1
        return True

    def snapshotted(self, task_id: str, size: int, *, open_ended: bool) -> None:
        """A save writes the task's JSON of `size` bytes; `open_ended`: more events may follow
        from this run (no final record yet)."""
        if open_ended:
            self._tails[task_id] = _Tail(size)
        else:
            self._tails.pop(task_id, None)

    def forget(self, task_id: str) -> None:
        """A save of the task failed: its row is not what the policy thinks."""
        self._tails.pop(task_id, None)
