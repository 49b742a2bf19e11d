"""Staging: a run's records numbered, saved with their webhook deliveries, then published."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from functools import partial

from accord.core.deliveries import Delivery
from accord.core.futures import mark_seen
from accord.core.records import EventRecord
from accord.errors import UnsupportedOperation
from accord.runtime.bus import EventBus
from accord.runtime.delivery import DeliveryWorker
from accord.runtime.publishing import PublishQueue
from accord.runtime.runs import Run
from accord.runtime.state_machine import TaskChange
from accord.store import LostTaskError, TaskStore
from accord.types import Task

# The most records a run stages as one save.
EVENTS_PER_SAVE = 64


class Staging:
    """Saves and publishes the records of runs, and claims their tasks for this replica.

    Each change gets the next sequence number of its task; the records a run makes in one
    turn of the event loop are staged with the store as one save, with the webhook
    deliveries they cause (the outbox), and published on the bus once that save committed.
    A save the store refuses as no longer this replica's task (`LostTaskError`) marks the run
    lost and hands it to `on_lost` (once), with the reason.
    """

    def __init__(
        self,
        store: TaskStore,
        bus: EventBus,
        replica_id: str,
        deliveries: DeliveryWorker | None,
        on_lost: Callable[[Run, str], None],
    ) -> None:
        self.store = store
        self.bus = bus
        self.replica_id = replica_id
        self.deliveries = deliveries
        self._on_lost = on_lost

    async def claim_stored(self, run: Run, seq: int) -> Task:
        """Claim a stored task for a run that continues it (a new epoch: whoever held it before
        can no longer write to it), as long as it is still at event `seq`; the task claimed."""
        if not self.store.tracks_runners:
            assert run.task is not None
            return run.task
        claimed = await self.store.claim(run.task_id, self.replica_id, at_seq=seq)
        if claimed is None:
            raise UnsupportedOperation(
                f"task {run.task_id} changed while this message was starting; send it again"
            )
        run.task = run.context.task = claimed.task
        run.seq, run.epoch = claimed.seq, claimed.epoch
        return claimed.task

    def claim_new(self, run: Run) -> None:
        """Record this replica as the runner of the run's new task, committed with its first
        save at the latest (a task without a live runner is an orphan to the other replicas)."""
        if self.store.tracks_runners:
            run.claimed = self.store.stage_claim(run.task_id, self.replica_id)
            _when_done(run.claimed, mark_seen)  # a run may end before it waits for it

    async def load_push_configs(self, run: Run) -> None:
        """Know the task's webhooks before its next change (only a replica that sends
        webhooks needs them: without, the run knows of none)."""
        if run.push_configs is None:
            if self.deliveries is None:
                run.push_configs = []
            else:
                run.push_configs = await self.store.list_push_configs(run.task_id)

    async def record(
        self, run: Run, change: TaskChange, *, final: bool, payload: bytes | None = None
    ) -> None:
        """Number the change, and save and publish it with the records made in the same turn
        of the event loop: a final record waits until they are all published; the others go
        ahead (up to AHEAD), staged together once the run lets the event loop go on. A quick
        task is then one save, a stream's chunks a few, and still each record is published
        only once its save has committed. Called with the run's lock held and its push
        configs loaded: no await comes between the change and its record joining the others,
        so the task always stands as of the last record made."""
        assert run.task is not None
        run.seq += 1
        if payload is None:
            payload = change.to_json()
        record = EventRecord(run.task_id, run.seq, change, final, payload)
        run.unstaged.append(record)
        if run.push_configs:
            run.unstaged_outbox += self._outbox(run, record)
        if not final:
            if len(run.unstaged) >= EVENTS_PER_SAVE:
                self.stage_unstaged(run)
            elif len(run.unstaged) == 1:
                asyncio.get_running_loop().call_soon(self.stage_unstaged, run)
            if run.publishing is not None:  # waits only while AHEAD records wait
                await run.publishing.settle(everything=False)
            return
        records, saved = self._stage(run)
        if run.claimed is not None:
            claimed, run.claimed = run.claimed, None
            await claimed
        if run.publishing is None:  # nothing went ahead: publish from here
            await saved
            for each in records:
                await self.bus.publish(each)
        else:
            run.publishing.add(records, saved)
            await run.publishing.settle(everything=True)
        run.reached_final = True

    def stage_unstaged(self, run: Run) -> None:
        """Stage what the run recorded in the turn that just ended (nothing, when a final
        record or a full burst staged it already)."""
        if run.unstaged:
            self._publishing(run).add(*self._stage(run))

    async def flush(self, runs: Iterable[Run]) -> None:
        """Stage what the runs recorded, and wait until all they staged is saved (or not)."""
        saves = []
        for run in runs:
            self.stage_unstaged(run)
            if run.last_save is not None:
                saves.append(run.last_save)
        if saves:
            await asyncio.wait(saves)

    def _stage(self, run: Run) -> tuple[list[EventRecord], asyncio.Future[None]]:
        """Hand the run's unstaged records to the store as one save; they and its future."""
        assert run.task is not None
        records, run.unstaged = run.unstaged, []
        outbox, run.unstaged_outbox = run.unstaged_outbox, []
        try:
            task_json = _task_json(run.task, records)
            if run.task.status.state.is_terminal:
                run.ended_json = task_json
            saved = self.store.stage_records(
                run.task,
                records,
                owner=run.owner,
                outbox=outbox,
                epoch=run.epoch,
                task_json=task_json,
            )
        except Exception as exc:  # as if the save had failed: the run learns it on its next record
            saved = asyncio.get_running_loop().create_future()
            saved.set_exception(exc)
        _when_done(saved, partial(self._check_saved, run, records[0].seq))
        if outbox and self.deliveries is not None:
            _when_done(saved, partial(_wake_on_commit, self.deliveries))
        run.last_save = saved
        return records, saved

    def _check_saved(self, run: Run, first_seq: int, saved: asyncio.Future[None]) -> None:
        """After a save of the run: if the store refused it as no longer this replica's task,
        give the task up (once)."""
        if saved.cancelled() or not isinstance(saved.exception(), LostTaskError):
            return
        run.seq = min(run.seq, first_seq - 1)  # what it refused does not count
        if not run.lost:
            run.lost = True
            self._on_lost(run, str(saved.exception()))

    def _publishing(self, run: Run) -> PublishQueue:
        if run.publishing is None:
            run.publishing = PublishQueue(self.bus.publish)
        return run.publishing

    def _outbox(self, run: Run, record: EventRecord) -> list[Delivery]:
        """The webhook deliveries `record` causes, each in its payload format, bodies made from
        the task as it is now (only the replica running the task makes them)."""
        if self.deliveries is None or not run.push_configs:
            return []
        assert run.task is not None
        return self.deliveries.outbox(run.task_id, run.seq, run.push_configs, record, run.task)


def _task_json(task: Task, records: list[EventRecord]) -> bytes | None:
    """The task's JSON for its store, where it is at hand or needed: its last record's when
    that record is the task itself (a new task's first), else made once the task ended, for
    its store and the reply that shows it (an ended task never changes again); None while it
    runs (a store may keep no JSON of it)."""
    last = records[-1]
    if last.event is task:
        return last.payload
    return task.to_json() if task.status.state.is_terminal else None


def _when_done(
    future: asyncio.Future[None], callback: Callable[[asyncio.Future[None]], None]
) -> None:
    """Call `callback(future)` once `future` is done: at once when it is already (a store
    that saves before it returns), rather than from the event loop's next turn."""
    if future.done():
        callback(future)
    else:
        future.add_done_callback(callback)


def _wake_on_commit(deliveries: DeliveryWorker, saved: asyncio.Future[None]) -> None:
    if not saved.cancelled() and saved.exception() is None:
        deliveries.wake()
