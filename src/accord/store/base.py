"""TaskStore: every job of a store in one interface, the one the runtime takes."""

from __future__ import annotations

from asyncio import Future
from datetime import datetime

from accord.store.agent_binding import AgentBinding
from accord.store.outbox import DeliveryOutbox
from accord.store.push_configs import PushConfigStore
from accord.store.retention import CleanupReport
from accord.store.runners import RunnerRegistry
from accord.store.stored import (
    LostTaskError,
    Orphan,
    StaleTaskError,
    StoredTask,
    StoreOfAnotherAgent,
)
from accord.store.task_log import TaskLog

__all__ = [
    "LostTaskError",
    "Orphan",
    "StaleTaskError",
    "StoreOfAnotherAgent",
    "StoredTask",
    "TaskStore",
]


class TaskStore(TaskLog, PushConfigStore, DeliveryOutbox, RunnerRegistry, AgentBinding):
    """A whole store: tasks and their event logs (`TaskLog`), their push configs
    (`PushConfigStore`), the outbox of webhook deliveries (`DeliveryOutbox`), runners
    (`RunnerRegistry`) and the agent it keeps tasks for (`AgentBinding`), opened, cleaned up
    and closed as one.

    Fencing: every save names the `epoch` of its writer's claim, and the store checks it in
    the same statement that writes. A save whose epoch is not the stored task's, or of a task
    that is terminal, changes nothing and fails with `LostTaskError`: a writer that lost the
    task (another replica claimed it, `claim` and `take_over` start a new epoch) or that
    writes after its end can never change it again, whatever it has staged. A new task starts
    at the epoch its first save names (0 unless claimed).
    """

    system: str = "other"
    """The backend, as telemetry names it (OpenTelemetry's `db.system`)."""

    def stage_claim(self, task_id: str, replica_id: str) -> Future[None]:
        """As `RunnerRegistry.stage_claim`; the default records the runner once every save
        staged before it is done."""
        return self._in_turn(lambda: self.record_runner(task_id, replica_id))

    async def open(self) -> None:
        """Get ready for use (connect, create or upgrade the schema); idempotent."""

    async def cleanup(self, now: datetime | None = None) -> CleanupReport:
        """Forget what the store's retention says is old as of `now` (default: the clock)."""
        return CleanupReport()

    async def close(self) -> None:
        """Release connections; the default has nothing to release."""
