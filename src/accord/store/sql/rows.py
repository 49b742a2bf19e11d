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
from accord.store.base import StoredTask
from accord.store.sql.schema import tasks
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
    """A task read with its JSON (columns `task`, `seq` and `owner`) as the store returns it,
    with the payloads of the artifact updates logged after that JSON (`tail`, in order)
    folded in."""
    task = Task.model_validate_json(row.task)
    for payload in tail:
        merge_artifact(task, TaskArtifactUpdateEvent.model_validate_json(payload))
    return StoredTask(task, row.seq, row.owner)


def event_values(record: EventRecord, now: datetime) -> dict[str, Any]:
    """The row of a logged event."""
    return {
        "task_id": record.task_id,
        "seq": record.seq,
        "final": record.final,
        "payload": record.payload,
        "created_at": now,
    }


def event_record(row: Any) -> EventRecord:
    """A logged event, its payload the bytes that were saved."""
    return EventRecord.decoded(row.task_id, row.seq, bytes(row.payload), final=row.final)


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
