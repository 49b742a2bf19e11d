"""Replicas: this server among others — its heartbeat, the orphans it adopts, cancels it relays."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import Protocol

from accord.errors import A2AError, TaskNotCancelable
from accord.runtime.bus import EventBus
from accord.store import StoredTask, TaskStore

log = logging.getLogger("accord.runtime")

HANDOVER_TIMEOUT = 5.0
"""How long a cancel waits for the replica running the task before acting on its own (the
default of `handover_timeout`)."""


class RunnerHost(Protocol):
    """What a replica's duties need from the runtime that runs its tasks."""

    def is_running(self, task_id: str) -> bool: ...

    async def cancel(self, task_id: str) -> object: ...

    async def resume(self, stored: StoredTask) -> None: ...

    async def abandon(self, stored: StoredTask) -> None: ...


class Replicas:
    """The duties of one replica among others sharing a store and a bus.

    Every `runner_ttl / 3` seconds it renews its heartbeat and adopts the tasks whose runner's
    heartbeat expired (compare-and-set in the store, so one replica wins each, under a new
    epoch that fences the old runner out): the host runs them again or ends them failed. It
    relays cancel requests for tasks it runs; one for a task running elsewhere waits up to
    `handover_timeout` seconds for that replica to cancel it. On close it gives up its tasks
    at once. Stores that do not track runners
    (`TaskStore.tracks_runners`) need none of this: a single process has no one to recover.
    """

    def __init__(
        self,
        host: RunnerHost,
        store: TaskStore,
        bus: EventBus,
        replica_id: str,
        runner_ttl: float,
        *,
        restartable: bool,
        handover_timeout: float = HANDOVER_TIMEOUT,
    ) -> None:
        self.host = host
        self.store = store
        self.bus = bus
        self.replica_id = replica_id
        self.runner_ttl = runner_ttl
        self.restartable = restartable
        self.handover_timeout = handover_timeout
        self._loop: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Listen for cancel requests; start the heartbeat if the store tracks runners."""
        self.bus.on_cancel_request(self._on_cancel_request)
        if not self.store.tracks_runners:
            log.info("%s does not track runners: no crash recovery", type(self.store).__name__)
            return
        await self.store.heartbeat(self.replica_id, self._alive_until())
        self._loop = asyncio.create_task(self._keep_alive(), name="accord-heartbeat")

    async def close(self) -> None:
        """Stop the heartbeat and let other replicas take this one's tasks over at once."""
        if self._loop is None:
            return
        self._loop.cancel()
        await asyncio.gather(self._loop, return_exceptions=True)
        try:
            await self.store.heartbeat(self.replica_id, datetime.now(UTC))
        except Exception:
            log.exception("could not give up this replica's tasks")

    async def recover_orphans(self) -> int:
        """Adopt tasks whose runner died: run them again if the agent is restartable,
        otherwise end them failed. Returns how many were adopted."""
        taken = 0
        for orphan in await self.store.orphans(datetime.now(UTC)):
            task = orphan.stored.task
            if self.host.is_running(task.id):
                continue
            taken_over = await self.store.take_over(task.id, orphan.runner, self.replica_id)
            if taken_over is None:
                continue
            taken += 1
            log.warning(
                "took over task %s from replica %s, silent past its runner TTL: %s",
                task.id,
                orphan.runner or "(none)",
                "running it again" if self.restartable else "ending it failed",
            )
            try:
                if self.restartable:
                    await self.host.resume(taken_over)
                else:
                    await self.host.abandon(taken_over)
            except Exception:
                log.exception("could not recover task %s", task.id)
        return taken

    async def cancel_elsewhere(self, task_id: str) -> bool:
        """Ask the replica running the task to cancel it; False if none did in time."""
        with self.bus.subscribe(task_id) as subscription:
            await self.bus.request_cancel(task_id)
            try:
                async with asyncio.timeout(self.handover_timeout):
                    async for record in subscription:
                        if record.ends_task:
                            return True
            except TimeoutError:
                log.warning("no replica canceled task %s; canceling it here", task_id)
        return False

    async def _on_cancel_request(self, task_id: str) -> None:
        if not self.host.is_running(task_id):
            return
        try:
            await self.host.cancel(task_id)
        except TaskNotCancelable:
            pass  # it ended meanwhile (here, or where it was taken over): nothing to do
        except A2AError as exc:
            log.info("cancel request for task %s refused: %s", task_id, exc.message)

    async def _keep_alive(self) -> None:
        interval = self.runner_ttl / 3
        while True:
            try:
                await self.store.heartbeat(self.replica_id, self._alive_until())
                await self.recover_orphans()
            except Exception:
                log.exception("heartbeat or recovery failed; retrying")
            await asyncio.sleep(interval)

    def _alive_until(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self.runner_ttl)
