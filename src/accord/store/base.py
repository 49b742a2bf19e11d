"""TaskStore: where tasks and their event log live, whatever the backend."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from asyncio import Future
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from accord.core.deliveries import Delivery
from accord.core.futures import mark_seen
from accord.core.principal import ANONYMOUS_OWNER
from accord.core.push import PushTarget
from accord.core.query import TaskPage, TaskQuery
from accord.core.records import EventRecord
from accord.store.retention import CleanupReport
from accord.types import Task


@dataclass(slots=True, frozen=True)
class Orphan:
    """A task that should be running but whose runner (a replica id, or None) is gone."""

    stored: StoredTask
    runner: str | None


class StaleTaskError(RuntimeError):
    """A save raced with another writer: the stored task moved on since it was read."""


class StoreOfAnotherAgent(RuntimeError):
    """The store keeps the tasks of an agent of another name than the one opening it."""

    def __init__(self, recorded: str, agent: str) -> None:
        super().__init__(
            f"this task store keeps the tasks of the agent {recorded!r}, not of {agent!r}:"
            f" give {agent!r} a store of its own, or, to hand it {recorded!r}'s tasks on"
            f" purpose (a renamed agent), open the store as {recorded!r}"
            " (accord serve --store-agent, create_app(store_agent=...))"
        )
        self.recorded = recorded
        self.agent = agent


class LostTaskError(StaleTaskError):
    """A save refused because its writer no longer holds the task: another claimed it since
    (a newer epoch), or the task has ended. Nothing the writer saves lands on it again."""


@dataclass(slots=True, frozen=True)
class StoredTask:
    """A task as last saved, with the sequence number of the last event applied to it, its
    owner, and the epoch of its latest claim (see `TaskStore.claim`)."""

    task: Task
    seq: int
    owner: str = ANONYMOUS_OWNER
    epoch: int = 0


class TaskStore(ABC):
    """Persistence of tasks, their event logs and their push notification configs.

    The runtime saves each change of a task together with the event that caused it, so a
    backend can keep both in one transaction; it stages them (`stage`) so that a long
    stream need not wait for one commit per event. Sequence numbers double as versions: saving
    at `seq` requires the stored task to be at `seq - 1` (absent when `seq` is 1), else
    `StaleTaskError` — two writers never silently overwrite each other. Tasks a store
    returns are owned by the runtime: callers that want to change one copy it first.

    Fencing: every save names the `epoch` of its writer's claim, and the store checks it in
    the same statement that writes. A save whose epoch is not the stored task's, or of a task
    that is terminal, changes nothing and fails with `LostTaskError`: a writer that lost the
    task (another replica claimed it, `claim` and `take_over` start a new epoch) or that
    writes after its end can never change it again, whatever it has staged. A new task starts
    at the epoch its first save names (0 unless claimed).

    Every task has an owner (`Principal.owner` of the caller that created it), saved with
    the task and never changed. Reads that take `owner` answer only that owner's tasks (and
    their push configs), as if the others did not exist; `owner=None` reads every task (the
    runtime's own bookkeeping).
    """

    _agent: str | None = None

    async def bind_agent(self, agent: str) -> None:
        """Keep the tasks of the agent named `agent` here: the store records the name when it
        keeps no agent's tasks yet, and raises StoreOfAnotherAgent when it keeps another's
        (replicas of one agent share a name, so they share the store)."""
        recorded = await self._recorded_agent(agent)
        if recorded != agent:
            raise StoreOfAnotherAgent(recorded, agent)

    async def _recorded_agent(self, agent: str) -> str:
        """The agent whose tasks the store keeps, `agent` when it kept nobody's (recorded now)."""
        if self._agent is None:
            self._agent = agent
        return self._agent

    @abstractmethod
    async def get(self, task_id: str, owner: str | None = None) -> StoredTask | None:
        """The task with `task_id` (of `owner`, when given), or None when there is none."""

    @abstractmethod
    async def save(
        self,
        task: Task,
        seq: int,
        record: EventRecord | None = None,
        *,
        owner: str = ANONYMOUS_OWNER,
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
    ) -> None:
        """Create or update `task` as of event `seq`, appending `record` to its event log and
        the webhook deliveries it causes to the outbox, all or nothing; a new task (`seq` 1)
        belongs to `owner`, which later saves leave as it is.

        Raises StaleTaskError when the stored task is not at `seq - 1`, LostTaskError when it
        is not at `epoch` or has ended.
        """

    @abstractmethod
    async def context_owner(self, context_id: str) -> str | None:
        """The owner of the tasks in context `context_id`, or None when it has none."""

    _last_staged: Future[None] | None = None

    def stage(
        self,
        task: Task,
        seq: int,
        record: EventRecord | None = None,
        *,
        owner: str = ANONYMOUS_OWNER,
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
    ) -> Future[None]:
        """Start saving `task` as of event `seq` (as `save` does); the future completes once
        it is saved, or fails with what `save` would raise.

        What is saved is taken from `task` before this returns, so the caller may go on
        changing it; the saves a caller stages are committed in the order it staged them (one
        after a save that failed fails as stale). The default saves a deep copy once every
        save staged before it is done.
        """
        copy = task.model_copy(deep=True)
        return self._in_turn(
            lambda: self.save(copy, seq, record, owner=owner, outbox=outbox, epoch=epoch)
        )

    def _in_turn(self, write: Callable[[], Awaitable[None]]) -> Future[None]:
        """`write` once every write staged before it is done."""
        previous = self._last_staged

        async def in_turn() -> None:
            if previous is not None:
                await asyncio.wait([previous])
            await write()

        self._last_staged = asyncio.ensure_future(in_turn())
        return self._last_staged

    @abstractmethod
    async def events_after(
        self, task_id: str, seq: int, limit: int | None = None
    ) -> list[EventRecord]:
        """The logged events of a task with a sequence number above `seq`, in order (the
        first `limit` of them, when given)."""

    @abstractmethod
    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        """Tasks matching `query` (of `query.owner`, when set), most recently updated first,
        one page at a time."""

    # Push configs are kept as PushTargets: the config with the name of the payload format
    # its webhook wants, an opaque string the store keeps as it was given. Reads given an
    # `owner` see the configs of that owner's tasks only.

    @abstractmethod
    async def set_push_config(self, task_id: str, target: PushTarget) -> PushTarget:
        """Add or replace (by id) a push config of a task; a config without id gets one."""

    @abstractmethod
    async def get_push_config(
        self, task_id: str, config_id: str, owner: str | None = None
    ) -> PushTarget | None:
        """One push config of a task, or None."""

    @abstractmethod
    async def list_push_configs(self, task_id: str, owner: str | None = None) -> list[PushTarget]:
        """All push configs of a task, in the order they were first set."""

    @abstractmethod
    async def delete_push_config(
        self, task_id: str, config_id: str, owner: str | None = None
    ) -> bool:
        """Remove one push config of a task; False when there was none."""

    # The outbox: webhook deliveries saved with the event that caused them (`save`), taken
    # by delivery workers on any replica. A queue is a task's deliveries to one webhook (their
    # `queue` key): only its oldest unparked delivery is ever handed out, so a webhook gets a
    # task's updates in order.

    @abstractmethod
    async def claim_deliveries(
        self, now: datetime, lease_until: datetime, limit: int
    ) -> list[Delivery]:
        """Take up to `limit` deliveries due at `now`, each the head of its queue, for one
        more try: their `attempts` go up by one and they are not due again before
        `lease_until` (a worker that dies with them leaves them to another then). Two callers
        never get the same delivery for the same lease."""

    @abstractmethod
    async def delivered(self, delivery_id: str) -> None:
        """Remove a delivery that was sent."""

    @abstractmethod
    async def retry_delivery(self, delivery_id: str, next_at: datetime, error: str) -> None:
        """Make a delivery due again at `next_at`, noting why its last try failed."""

    @abstractmethod
    async def park_delivery(
        self, delivery_id: str, now: datetime, error: str, *, with_queue: bool = True
    ) -> int:
        """Give up on a delivery (parked: never tried again, kept to be seen) and, with
        `with_queue`, on the rest of its queue too (a webhook that is gone). How many were
        parked."""

    @abstractmethod
    async def parked_deliveries(self, limit: int = 100) -> list[Delivery]:
        """Parked deliveries, most recently parked first."""

    @abstractmethod
    async def requeue_deliveries(
        self,
        now: datetime,
        deadline: datetime,
        *,
        ids: Sequence[str] | None = None,
        task_id: str | None = None,
    ) -> int:
        """Put parked deliveries back in their queues for a new round of tries: those in
        `ids` (None: every parked one), of `task_id` only if given. Their tries start over
        (`attempts` 0, to be delivered by `deadline`); they keep their place in their queue
        and are due at `now`, or, if their queue has an unparked delivery waiting or under a
        lease, no sooner than that one's `next_at`, so a queue never has two under way. How
        many were requeued."""

    # Runners: which replica runs which task, and which replicas are alive. A task that is
    # submitted or working while its runner's heartbeat has expired is an orphan. A store
    # that keeps these says so with `tracks_runners`; without it nothing is recovered.

    tracks_runners: ClassVar[bool] = False

    async def heartbeat(self, replica_id: str, expires_at: datetime) -> None:
        """Record that `replica_id` is alive until `expires_at`."""
        raise NotImplementedError(f"{type(self).__name__} does not track runners")

    async def claim(
        self, task_id: str, replica_id: str, *, at_seq: int | None = None
    ) -> StoredTask | None:
        """Make `replica_id` the runner of `task_id` under a new epoch, and return the task as
        claimed (with that epoch): from now on, saves under an earlier epoch are refused. None,
        claiming nothing, when the task is gone or has ended, or (with `at_seq`) has moved
        past event `at_seq`."""
        raise NotImplementedError(f"{type(self).__name__} does not track runners")

    def stage_records(
        self,
        task: Task,
        records: Sequence[EventRecord],
        *,
        owner: str = ANONYMOUS_OWNER,
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
    ) -> Future[None]:
        """Start saving `task` as of the last of `records`, events that follow one another from
        the stored version (`records[0].seq - 1`), with the deliveries they cause: as one save
        where the backend can, all of them or none. The future is as `stage`'s.

        The default stages each record on its own (`stage`), the task as of the last one in
        each: a backend that only implements `save` is all or nothing per record.
        """
        *earlier, last = records
        for record in earlier:
            # A failed save fails every later one, the last included: its error is reported there.
            saved = self.stage(task, record.seq, record, owner=owner, epoch=epoch)
            saved.add_done_callback(mark_seen)
        return self.stage(task, last.seq, last, owner=owner, outbox=outbox, epoch=epoch)

    def stage_claim(self, task_id: str, replica_id: str) -> Future[None]:
        """Start recording `replica_id` as the runner of a task it is creating (its epoch stays:
        nobody else could have written to it yet); it commits no later than the saves staged
        after it (the default records it once every save staged before it is done)."""
        return self._in_turn(lambda: self.record_runner(task_id, replica_id))

    async def record_runner(self, task_id: str, replica_id: str) -> None:
        """Record that `replica_id` runs `task_id` from now on, its epoch left as it is."""
        raise NotImplementedError(f"{type(self).__name__} does not track runners")

    async def orphans(self, now: datetime) -> list[Orphan]:
        """Submitted or working tasks whose runner is not alive at `now`."""
        raise NotImplementedError(f"{type(self).__name__} does not track runners")

    async def take_over(
        self, task_id: str, dead_runner: str | None, replica_id: str
    ) -> StoredTask | None:
        """Make `replica_id` the runner of an orphan under a new epoch (as `claim` does),
        unless another replica did first or the task has ended: the task as taken, or None."""
        raise NotImplementedError(f"{type(self).__name__} does not track runners")

    # Lifecycle and retention.

    async def open(self) -> None:
        """Get ready for use (connect, create or upgrade the schema); idempotent."""

    async def cleanup(self, now: datetime | None = None) -> CleanupReport:
        """Forget what the store's retention says is old as of `now` (default: the clock)."""
        return CleanupReport()

    async def close(self) -> None:
        """Release connections; the default has nothing to release."""
