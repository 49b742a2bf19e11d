"""Run and Runs: one execution of the executor for one task, and the runs of this replica."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from accord.agents.context import RequestContext
from accord.core.deliveries import Delivery
from accord.core.principal import ANONYMOUS_OWNER
from accord.core.push import PushTarget
from accord.core.records import EventRecord
from accord.errors import TaskNotFound
from accord.runtime.bus import EventBus
from accord.runtime.publishing import PublishQueue
from accord.types import Task


@dataclass(eq=False)
class Run:
    """One execution of the executor for one incoming message; at most one per task."""

    context: RequestContext
    task: Task | None
    seq: int
    # Whose task it is (`Principal.owner`): the only caller that may see it.
    owner: str = ANONYMOUS_OWNER
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    replied: bool = False
    # Whether this run published a final record: a resumed task starts out interrupted, so
    # its state alone does not tell whether this run answered the new message.
    reached_final: bool = False
    worker: asyncio.Task[None] | None = None
    # The task's webhooks, loaded when first needed; None means "ask the store".
    push_configs: list[PushTarget] | None = None
    # Its records from saving to publishing, made when the first ones go ahead of their save.
    publishing: PublishQueue | None = None
    # Records made since the run last let the event loop go on: staged together, as one save.
    unstaged: list[EventRecord] = field(default_factory=list)
    unstaged_outbox: list[Delivery] = field(default_factory=list)
    # Its last save staged: done once all of them are (a task's saves commit in order).
    last_save: asyncio.Future[None] | None = None
    # The store recording this replica as the task's runner, until the run first waits.
    claimed: asyncio.Future[None] | None = None
    # The JSON of the task once it ended, made when its last save was staged.
    ended_json: bytes | None = None
    # The epoch of this replica's claim on the task, which its saves are fenced by.
    epoch: int = 0
    # Whether the store refused a save for the task being another's (or over) by now.
    lost: bool = False
    # The context's, read on every change the run makes.
    task_id: str = field(init=False)

    def __post_init__(self) -> None:
        self.task_id = self.context.task_id

    @property
    def working(self) -> bool:
        """Whether its executor is at work on the task (started, not done, not lost)."""
        return self.worker is not None and not self.worker.done() and not self.lost


class Runs:
    """The runs of this replica, by task: at most one per task. While a task has a run here,
    the bus, if given, is told this replica runs it (`EventBus.running`: its cancel requests
    come here), unless it is a bus that has no use for it (which keeps the default)."""

    def __init__(self, bus: EventBus | None = None) -> None:
        self._by_task: dict[str, Run] = {}
        self._bus = bus if bus is not None and type(bus).running is not EventBus.running else None
        self._held: dict[str, AbstractContextManager[None]] = {}

    def __iter__(self) -> Iterator[Run]:
        return iter(list(self._by_task.values()))

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._by_task

    def get(self, task_id: str) -> Run | None:
        """The run of the task, if any."""
        return self._by_task.get(task_id)

    def add(self, run: Run) -> bool:
        """Register `run` unless its task has a run already; whether it was."""
        if run.task_id in self._by_task:
            return self._by_task[run.task_id] is run
        self.replace(run)
        return True

    def replace(self, run: Run) -> None:
        """Register `run` in place of whichever run its task has."""
        self._by_task[run.task_id] = run
        if self._bus is not None and run.task_id not in self._held:
            held = self._held[run.task_id] = self._bus.running(run.task_id)
            held.__enter__()

    def discard(self, run: Run) -> None:
        """Forget `run`, if it is still its task's."""
        if self._by_task.get(run.task_id) is run:
            del self._by_task[run.task_id]
            held = self._held.pop(run.task_id, None)
            if held is not None:
                held.__exit__(None, None, None)

    def live(self, task_id: str, owner: str | None) -> Run | None:
        """The run that holds the task, if any; TaskNotFound when another caller than `owner`
        (when given) owns it."""
        run = self._by_task.get(task_id)
        if run is None or run.task is None or run.lost:
            return None
        if owner is not None and run.owner != owner:
            raise TaskNotFound(f"no task with id {task_id!r}")
        return run

    def working_for(self, owner: str) -> int:
        """How many executors work on messages callers of `owner` sent."""
        return sum(
            1
            for run in self._by_task.values()
            if run.worker is not None
            and not run.worker.done()
            and run.context.principal.owner == owner
        )
