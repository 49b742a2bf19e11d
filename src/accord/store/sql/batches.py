"""Write batches of the SQL store: task saves and runner claims committed in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import Connection, Table, bindparam, delete, func, insert, select, update

from accord.store.sql.group_commit import Outcome
from accord.store.sql.rows import TASK_CHANGES
from accord.store.sql.schema import (
    push_deliveries,
    task_events,
    task_runners,
    task_snapshots,
    tasks,
)
from accord.store.stored import LostTaskError, StaleTaskError


@dataclass(slots=True, frozen=True)
class TaskSave:
    """One save: the task row's new values, moving it from version `previous` (0: the save
    creates it) to `seq`, and the events that took it there (one, or several merged).

    A save writes the task's JSON (`snapshot`) with its row, unless it is `appended`: then
    the row only moves to its new `seq`, and the events, artifact updates, join the log tail
    that reads fold into the JSON (`row` holds `task_id`, `previous_seq` and `seq`). Other
    rows hold the columns of a new task (`NEW_TASK_COLUMNS`), or `task_id`, `previous_seq` and
    the columns each save sets (`TASK_CHANGES`); all but new ones `held_epoch` too, the epoch
    the save was made under (`epoch`), which the row must still be at.
    """

    task_id: str
    previous: int
    seq: int
    row: dict[str, Any]
    events: tuple[dict[str, Any], ...]
    terminal: bool
    snapshot: str | None = None
    appended: bool = False
    deliveries: tuple[dict[str, Any], ...] = ()
    """Outbox rows the events cause, written only if the save goes through."""
    epoch: int = 0


@dataclass(slots=True, frozen=True)
class RunnerClaim:
    """A replica taking a task on: its runner from now on."""

    task_id: str
    replica_id: str


Write = TaskSave | RunnerClaim

_NEW_TASK_ONLY = (tasks.c.id.key, tasks.c.created_at.key, tasks.c.owner.key, tasks.c.epoch.key)
NEW_TASK_COLUMNS = (*_NEW_TASK_ONLY, *TASK_CHANGES)
"""The columns of a task's row as its first save writes them."""

# The statements of a batch: a save moves the row from `previous_seq` to its new seq, if the
# row is still at the epoch the save was made under and not finished (fencing: a writer that
# lost the task, or writes after its end, changes nothing, whatever `seq` it names).
UPDATE_TASK = update(tasks).where(
    tasks.c.id == bindparam("task_id"),
    tasks.c.seq == bindparam("previous_seq"),
    tasks.c.epoch == bindparam("held_epoch"),
    tasks.c.finished_at.is_(None),
)
# The snapshot stays: if it was of `seq - 1`, the tail now starts after it.
APPEND_TO_TASK = UPDATE_TASK.values(
    {tasks.c.snapshot_seq: func.coalesce(tasks.c.snapshot_seq, bindparam("previous_seq"))}
)
STORED_VERSION = select(tasks.c.seq, tasks.c.epoch, tasks.c.finished_at.is_not(None)).where(
    tasks.c.id == bindparam("task_id")
)
LOG_EVENT = insert(task_events)
ENQUEUE_DELIVERY = insert(push_deliveries)
_SNAPSHOT = select(tasks.c.snapshot_seq).where(tasks.c.id == bindparam("trimmed_task"))
# Events a task's snapshot does not hold yet stay, whatever the bound.
TRIM_LOG = delete(task_events).where(
    task_events.c.task_id == bindparam("trimmed_task"),
    task_events.c.seq >= bindparam("trimmed_from"),
    task_events.c.seq <= bindparam("up_to"),
    task_events.c.seq <= func.coalesce(_SNAPSHOT.scalar_subquery(), bindparam("up_to")),
)
FORGET_RUNNER = delete(task_runners).where(task_runners.c.task_id == bindparam("finished"))


class DialectStatements:
    """The statements of a batch that each dialect spells its own way (INSERT ... ON CONFLICT)."""

    def __init__(self, dialect_insert: Callable[[Table], Any]) -> None:
        self.create_task = dialect_insert(tasks).on_conflict_do_nothing(index_elements=[tasks.c.id])
        snapshot = dialect_insert(task_snapshots)
        self.write_snapshot = snapshot.on_conflict_do_update(
            index_elements=[task_snapshots.c.task_id],
            set_={task_snapshots.c.task.key: snapshot.excluded.task},
        )
        claim = dialect_insert(task_runners)
        self.claim_runner = claim.on_conflict_do_update(
            index_elements=[task_runners.c.task_id],
            set_={task_runners.c.replica_id.key: claim.excluded.replica_id},
        )


class BatchTarget(Protocol):
    """A transaction a batch is written in, one statement per method."""

    def create_task(self, row: dict[str, Any]) -> bool:
        """Insert a task's first row; False when the task exists already."""

    def update_task(self, row: dict[str, Any]) -> bool:
        """Move a task's row from `previous_seq`; False when it is not there."""

    def append_to_task(self, row: dict[str, Any]) -> bool:
        """Move a task's row from `previous_seq` to `seq`, keeping its JSON; False as above."""

    def stored_version(self, task_id: str) -> StoredVersion | None:
        """Where a task's row is, None when there is none."""

    def write_snapshots(self, rows: list[dict[str, Any]]) -> None: ...

    def log_events(self, rows: list[dict[str, Any]]) -> None: ...

    def enqueue_deliveries(self, rows: list[dict[str, Any]]) -> None: ...

    def trim_logs(self, rows: list[dict[str, Any]]) -> None: ...

    def claim_runners(self, rows: list[dict[str, Any]]) -> None: ...

    def forget_runners(self, rows: list[dict[str, Any]]) -> None: ...


def write_batch(target: BatchTarget, batch: Sequence[Write], bound: int | None) -> list[Outcome]:
    """Apply `batch` in order, one save at a time; a stale save changes nothing.

    `bound` is the retention's `max_events_per_task`: older events of a logged task go.
    """
    outcomes: list[Outcome] = []
    for write in batch:
        if isinstance(write, RunnerClaim):
            outcomes.append(None)
            continue
        if write.previous == 0:
            written = target.create_task(write.row)
        elif write.appended:
            written = target.append_to_task(write.row)
        else:
            written = target.update_task(write.row)
        if written:
            outcomes.append(None)
        else:
            outcomes.append(refused(write, target.stored_version(write.task_id)))
    rows = follow_up(batch, outcomes, bound)
    for statement, statement_rows in (
        (target.write_snapshots, rows.snapshots),
        (target.log_events, rows.events),
        (target.enqueue_deliveries, rows.deliveries),
        (target.trim_logs, rows.trims),
        (target.claim_runners, rows.claims),
        (target.forget_runners, rows.finished),
    ):
        if statement_rows:
            statement(statement_rows)
    return outcomes


StoredVersion = tuple[int, int, bool]
"""A task row's `seq`, `epoch`, and whether it is finished."""


def refused(save: TaskSave, stored: StoredVersion | None) -> StaleTaskError:
    """The error of a save that did not go through, `stored` being where its row is (None:
    not there, or not known)."""
    if stored is not None and save.previous > 0:
        seq, epoch, finished = stored
        if finished:
            return LostTaskError(f"task {save.task_id} has ended: it takes no more writes")
        if epoch != save.epoch:
            return LostTaskError(f"task {save.task_id} is at epoch {epoch}, not {save.epoch}")
    seq = stored[0] if stored is not None else 0
    return StaleTaskError(f"task {save.task_id} is at event {seq}, not {save.previous}")


def merge_saves(batch: Sequence[Write]) -> tuple[list[Write], list[int]]:
    """`batch` with each task's saves that follow one another (each at the version and under
    the epoch the one before left, which did not end the task) merged into one save, and for
    each write of `batch` the index of the write it went into. A runner claim of a task keeps
    its saves before and after it apart."""
    writes: list[Write] = []
    into: list[int] = []
    open_saves: dict[str, tuple[int, TaskSave]] = {}  # the save of a task the next may join
    for write in batch:
        if isinstance(write, TaskSave):
            earlier = open_saves.get(write.task_id)
            if (
                earlier is not None
                and earlier[1].seq == write.previous
                and earlier[1].epoch == write.epoch
                and not earlier[1].terminal  # what follows an end is refused on its own
            ):
                at, merged = earlier[0], merge(earlier[1], write)
                writes[at] = merged
                open_saves[write.task_id] = (at, merged)
                into.append(at)
                continue
            if earlier is None:
                open_saves[write.task_id] = (len(writes), write)
            else:  # which of the two the next one follows, only writing them in turn tells
                del open_saves[write.task_id]
        else:
            open_saves.pop(write.task_id, None)
        into.append(len(writes))
        writes.append(write)
    return writes, into


def merge(first: TaskSave, then: TaskSave) -> TaskSave:
    """The one save that does what `first`, then `then` (from the version `first` leaves) do."""
    appended = first.appended and then.appended
    snapshot = None
    if appended:
        row = {**first.row, "seq": then.seq}
    else:
        # The row's columns as the last save that wrote the JSON left them: `then`, or `first`
        # with `then`'s events as a log tail after its JSON.
        latest = first if then.appended else then
        changes = {key: latest.row[key] for key in TASK_CHANGES}
        if then.appended:
            changes.update(seq=then.seq, snapshot_seq=changes["snapshot_seq"] or first.seq)
        snapshot = latest.snapshot
        if first.previous == 0:
            row = {key: first.row[key] for key in _NEW_TASK_ONLY} | changes
        else:
            held = {"task_id": first.task_id, "previous_seq": first.previous}
            row = held | {"held_epoch": first.epoch} | changes
    return TaskSave(
        first.task_id,
        first.previous,
        then.seq,
        row,
        first.events + then.events,
        then.terminal,
        snapshot,
        appended,
        first.deliveries + then.deliveries,
        first.epoch,
    )


@dataclass(slots=True, frozen=True)
class FollowUp:
    """What the saves of a batch that went through bring along, as rows for its statements."""

    snapshots: list[dict[str, Any]]
    """The JSON of their tasks (`task_id`, `task`), the last one of each task."""
    events: list[dict[str, Any]]
    """Their events, for the log."""
    trims: list[dict[str, Any]]
    """Log entries beyond the retention's bound (`trimmed_task`, from `trimmed_from` to
    `up_to`): see `trim`."""
    claims: list[dict[str, Any]]
    """Runner rows to upsert."""
    claims_if_stale: list[dict[str, Any]]
    """Runner rows claimed before a save that ends their task: upserted only if that save
    turns out stale (a writer that learns outcomes as it writes has them already)."""
    finished: list[dict[str, Any]]
    """Tasks that lose their runner (`finished`): a finished task has none."""
    deliveries: list[dict[str, Any]]
    """Their outbox rows."""


def follow_up(batch: Sequence[Write], outcomes: Sequence[Outcome], bound: int | None) -> FollowUp:
    """The rows that follow from `batch` once the saves with a None outcome went through.

    Of the claims and finishing saves of one task, the last in the batch decides its runner:
    applying only that one leaves the row as applying all of them in order would.
    """
    events: list[dict[str, Any]] = []
    deliveries: list[dict[str, Any]] = []
    snapshots: dict[str, str] = {}
    runners: dict[str, str | None] = {}
    claimed_before_end: dict[str, str] = {}
    for write, outcome in zip(batch, outcomes, strict=True):
        if isinstance(write, RunnerClaim):
            runners[write.task_id] = write.replica_id
        elif outcome is None:
            if write.snapshot is not None:
                snapshots[write.task_id] = write.snapshot
            events.extend(write.events)
            deliveries.extend(write.deliveries)
            if write.terminal:
                if (claimed := runners.get(write.task_id)) is not None:
                    claimed_before_end[write.task_id] = claimed
                runners[write.task_id] = None
    trims = [
        trim(event["task_id"], (event["first_seq"] or event["seq"]) - bound, event["seq"] - bound)
        for event in events
        if bound is not None and event["seq"] > bound
    ]
    return FollowUp(
        snapshots=[{"task_id": task_id, "task": task} for task_id, task in snapshots.items()],
        events=events,
        trims=trims,
        claims=[
            {"task_id": task_id, "replica_id": replica_id}
            for task_id, replica_id in runners.items()
            if replica_id is not None
        ],
        claims_if_stale=[
            {"task_id": task_id, "replica_id": replica_id}
            for task_id, replica_id in claimed_before_end.items()
            if runners[task_id] is None
        ],
        finished=[{"finished": task_id} for task_id, replica in runners.items() if replica is None],
        deliveries=deliveries,
    )


TRIM_SWEEP = 1024
"""Every so many events, a trim drops all older events of the task instead of just a few."""


def trim(task_id: str, first: int, up_to: int) -> dict[str, Any]:
    """The log trim that a logged row of events brings along, `first` and `up_to` being its
    first and last seq less the bound: the rows whose events all fell out of the bound with it.

    A row is found by its last seq, so the trim looks those up in `first`..`up_to`: a range
    starting at the log's oldest event would step over every event deleted before it
    (PostgreSQL keeps them in the index until vacuumed), each time. Whenever the range passes
    a multiple of TRIM_SWEEP it starts at the beginning, for what the others left (a bound
    that was lowered).
    """
    sweep = up_to // TRIM_SWEEP != (first - 1) // TRIM_SWEEP
    return {"trimmed_task": task_id, "trimmed_from": 0 if sweep else first, "up_to": up_to}


class ConnectionTarget:
    """A batch written through a SQLAlchemy connection (in its transaction)."""

    def __init__(self, connection: Connection, statements: DialectStatements) -> None:
        self._connection = connection
        self._statements = statements

    def create_task(self, row: dict[str, Any]) -> bool:
        return self._connection.execute(self._statements.create_task, row).rowcount == 1

    def update_task(self, row: dict[str, Any]) -> bool:
        return self._connection.execute(UPDATE_TASK, row).rowcount == 1

    def append_to_task(self, row: dict[str, Any]) -> bool:
        return self._connection.execute(APPEND_TO_TASK, row).rowcount == 1

    def stored_version(self, task_id: str) -> StoredVersion | None:
        row = self._connection.execute(STORED_VERSION, {"task_id": task_id}).first()
        return (row[0], row[1], bool(row[2])) if row is not None else None

    def write_snapshots(self, rows: list[dict[str, Any]]) -> None:
        self._connection.execute(self._statements.write_snapshot, rows)

    def log_events(self, rows: list[dict[str, Any]]) -> None:
        self._connection.execute(LOG_EVENT, rows)

    def enqueue_deliveries(self, rows: list[dict[str, Any]]) -> None:
        self._connection.execute(ENQUEUE_DELIVERY, rows)

    def trim_logs(self, rows: list[dict[str, Any]]) -> None:
        self._connection.execute(TRIM_LOG, rows)

    def claim_runners(self, rows: list[dict[str, Any]]) -> None:
        self._connection.execute(self._statements.claim_runner, rows)

    def forget_runners(self, rows: list[dict[str, Any]]) -> None:
        self._connection.execute(FORGET_RUNNER, rows)
