"""RunnerRegistry: the interface to which replica runs which task, and which are alive."""

from __future__ import annotations

from asyncio import Future
from datetime import datetime
from typing import ClassVar, NoReturn

from accord.store.stored import Orphan, StoredTask


class RunnerRegistry:
    """Runners: which replica runs which task, and which replicas are alive. A task that is
    submitted or working while its runner's heartbeat has expired is an orphan. A store that
    keeps these says so with `tracks_runners`; without it nothing is recovered (and these
    methods raise NotImplementedError).

    Fencing: claiming a task (`claim`, `take_over`) starts a new epoch of it; the saves of a
    writer holding an earlier epoch are refused from then on (LostTaskError)."""

    tracks_runners: ClassVar[bool] = False

    async def heartbeat(self, replica_id: str, expires_at: datetime) -> None:
        """Record that `replica_id` is alive until `expires_at`."""
        self._untracked()

    async def claim(
        self, task_id: str, replica_id: str, *, at_seq: int | None = None
    ) -> StoredTask | None:
        """Make `replica_id` the runner of `task_id` under a new epoch, and return the task as
        claimed (with that epoch): from now on, saves under an earlier epoch are refused. None,
        claiming nothing, when the task is gone or has ended, or (with `at_seq`) has moved
        past event `at_seq`."""
        self._untracked()

    def stage_claim(self, task_id: str, replica_id: str) -> Future[None]:
        """Start recording `replica_id` as the runner of a task it is creating (its epoch stays:
        nobody else could have written to it yet); it commits no later than the saves staged
        after it."""
        self._untracked()

    async def record_runner(self, task_id: str, replica_id: str) -> None:
        """Record that `replica_id` runs `task_id` from now on, its epoch left as it is."""
        self._untracked()

    async def orphans(self, now: datetime) -> list[Orphan]:
        """Submitted or working tasks whose runner is not alive at `now`."""
        self._untracked()

    async def take_over(
        self, task_id: str, dead_runner: str | None, replica_id: str
    ) -> StoredTask | None:
        """Make `replica_id` the runner of an orphan under a new epoch (as `claim` does),
        unless another replica did first or the task has ended: the task as taken, or None."""
        self._untracked()

    def _untracked(self) -> NoReturn:
        raise NotImplementedError(f"{type(self).__name__} does not track runners")
