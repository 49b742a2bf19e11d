"""Rows of the task store's tables to and from tasks, event records, push configs, deliveries.

Decoders take any SQLAlchemy row (typed Any: Row's type parameters differ between 2.0 and
2.1) that has the columns they name.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from accord.core.artifacts import merge_artifact
from accord.core.deliveries import Delivery
from accord.core.push import PushTarget
from accord.core.query import status_time
from accord.core.records import EventRecord
from accord.store.sql.schema import tasks
from accord.store.stored import StoredTask
from accord.types import PushNotificationConfig, Task, TaskArtifactUpdateEvent

TASK_CHANGES = tuple(
    column.key
    for column in (
        tasks.c.context_id,
        tasks.c.state,
        tasks.c.updated_at,
        tasks.c.seq,
        tasks.c.finished_at,
        tasks.c.snapshot_seq,
    )
)
"""The columns of a task's row that each save sets, in `task_values`' order."""


def task_values(task: Task, seq: int, now: datetime) -> dict[str, Any]:
    """The columns of a task's row that change with each save that writes its JSON, as of
    event `seq` (its JSON goes to accord_task_snapshots)."""
    state = task.status.state
    changes = (
        task.context_id,
        state.value,
        status_time(task),
        seq,
        now if state.is_terminal else None,
        None,  # the JSON is as of `seq`: no log tail to fold in
    )
    return dict(zip(TASK_CHANGES, changes, strict=True))


def stored_task(row: Any, tail: Sequence[bytes] = ()) -> StoredTask:
    """A task read with its JSON (columns `task`, `seq`, `owner`, `epoch`) as the store returns
    it, with the payloads of the artifact updates logged after that JSON (`tail`, in order)
    folded in."""
    task = Task.model_validate_json(row.task)
    for payload in tail:
        merge_artifact(task, TaskArtifactUpdateEvent.model_validate_json(payload))
    return StoredTask(task, row.seq, row.owner, row.epoch)


def event_values(records: Sequence[EventRecord], now: datetime) -> dict[str, Any]:
    """The log row of the records of one save (consecutive events of one task): the one
    event as it is, or several packed into one row (`pack_events`), one row to write."""
    last = records[-1]
    packed = len(records) > 1
    return {
        "task_id": last.task_id,
        "seq": last.seq,
        "final": last.final,
        "payload": pack_events(records) if packed else last.payload,
        "created_at": now,
        "first_seq": records[0].seq if packed else None,
    }


def event_records(row: Any) -> list[EventRecord]:
    """The events of a log row (columns `task_id`, `seq`, `first_seq`, `final`, `payload`),
    their payloads the bytes that were saved."""
    payload = bytes(row.payload)
    if row.first_seq is None:
        return [EventRecord.decoded(row.task_id, row.seq, payload, final=row.final)]
    events = unpack_events(payload)
    if len(events) != row.seq - row.first_seq + 1:
        raise ValueError(f"the log row of task {row.task_id} up to event {row.seq} is damaged")
    return [
        EventRecord.decoded(row.task_id, seq, event, final=final)
        for seq, (final, event) in enumerate(events, start=row.first_seq)
    ]


def pack_events(records: Sequence[EventRecord]) -> bytes:
    """Several records' payloads in one: each behind a line `FINAL LENGTH` (`1 205`)."""
    return b"".join(
        b"%d %d\n%b" % (record.final, len(record.payload), record.payload) for record in records
    )


def unpack_events(packed: bytes) -> list[tuple[bool, bytes]]:
    """The (final, payload) pairs `pack_events` packed, in order; ValueError if damaged."""
    events: list[tuple[bool, bytes]] = []
    at = 0
    while at < len(packed):
        line_end = packed.index(b"\n", at)
        final, length = packed[at:line_end].split(b" ")
        at = line_end + 1 + int(length)
        if at > len(packed):
            raise ValueError("a packed event runs past the end of its row")
        events.append((final == b"1", packed[line_end + 1 : at]))
    return events


def push_target(row: Any) -> PushTarget:
    """A push config row (columns `config` and `payload_format`)."""
    return PushTarget(PushNotificationConfig.model_validate_json(row.config), row.payload_format)


def delivery_values(delivery: Delivery) -> dict[str, Any]:
    """An outbox row of `delivery`."""
    return {field: getattr(delivery, field) for field in Delivery.__dataclass_fields__}


def delivery(row: Any) -> Delivery:
    """The Delivery of an outbox row."""
    values = {field: getattr(row, field) for field in Delivery.__dataclass_fields__}
    values["body"] = bytes(values["body"])
    return Delivery(**values)
