"""Handover: changing a task that no message of this replica runs (cancel, resume, abandon)."""

from __future__ import annotations

from accord.agents.context import RequestContext
from accord.core.call_context import CallContext
from accord.core.principal import Principal
from accord.core.query import RUNNING_STATES
from accord.errors import TaskNotCancelable, UnsupportedOperation
from accord.runtime.bus import EventBus
from accord.runtime.follow import Follower
from accord.runtime.lifecycle import RunLifecycle, status_event
from accord.runtime.replicas import Replicas
from accord.runtime.runs import Run, Runs
from accord.store import LostTaskError, StoredTask, TaskStore
from accord.types import Message, Role, Task, TaskState, new_id


class Handover:
    """Cancels tasks, live here or not (a task running on another replica is canceled by its
    runner, or here once that one does not answer), and resumes or fails tasks adopted from
    replicas that died. A task no live run holds is changed under a run of its own, claimed,
    so that a runner that only stalled cannot write to it any more."""

    def __init__(
        self,
        store: TaskStore,
        bus: EventBus,
        replica_id: str,
        runs: Runs,
        lifecycle: RunLifecycle,
        follower: Follower,
        replicas: Replicas,
    ) -> None:
        self.store = store
        self.bus = bus
        self.replica_id = replica_id
        self.runs = runs
        self.lifecycle = lifecycle
        self.follower = follower
        self.replicas = replicas

    async def cancel(self, task_id: str, owner: str | None, call: CallContext | None) -> Task:
        """See `TaskRuntime.cancel`."""
        run = self.runs.live(task_id, owner)
        if run is not None:
            return await self._cancel_run(run)
        stored = await self.follower.stored(task_id, owner)
        state = stored.task.status.state
        if state.is_terminal:
            raise TaskNotCancelable(f"task {task_id} is already {state.value}")
        if state in RUNNING_STATES and self.bus.distributed:
            if await self.replicas.cancel_elsewhere(task_id):
                return (await self.follower.current(task_id))[0]
            stored = await self.store.get(task_id) or stored
        # No live run holds the task (it waits for input, or its runner is gone): cancel it
        # under a run of our own, registered so that no new message starts one meanwhile.
        run = detached_run(stored, call)
        if not self.runs.add(run):
            raise UnsupportedOperation(f"task {task_id} is starting a run; try again")
        try:
            if self.store.tracks_runners:
                claimed = await self.store.claim(task_id, self.replica_id, at_seq=stored.seq)
                if claimed is None:
                    return await self._not_canceled(task_id)
                run = detached_run(claimed, call)
                self.runs.replace(run)
            return await self._cancel_run(run)
        finally:
            self.runs.discard(run)

    async def resume(self, stored: StoredTask) -> None:
        """Run an adopted task's executor again, from its last saved state."""
        run = detached_run(stored)
        if not self.runs.add(run):
            return
        note = "Resumed: the server that was running this task stopped"
        await self.lifecycle.emit(
            run, status_event(run.task_id, run.context.context_id, TaskState.WORKING, note)
        )
        self.lifecycle.launch(run)

    async def abandon(self, stored: StoredTask) -> None:
        """End an adopted task failed: the server running it stopped."""
        run = detached_run(stored)
        if not self.runs.add(run):
            return
        reason = "The server running this task stopped before it finished"
        try:
            await self.lifecycle.emit(
                run, status_event(run.task_id, run.context.context_id, TaskState.FAILED, reason)
            )
        finally:
            self.runs.discard(run)

    async def _not_canceled(self, task_id: str) -> Task:
        """The answer to a cancel whose claim found the task moved on: not cancelable once it
        has ended, else a race to try again."""
        stored = await self.follower.stored(task_id, None)
        state = stored.task.status.state
        if state.is_terminal:
            raise TaskNotCancelable(f"task {task_id} is already {state.value}")
        raise UnsupportedOperation(f"task {task_id} changed while being canceled; try again")

    async def _cancel_run(self, run: Run) -> Task:
        try:
            return await self._cancel_held(run)
        except LostTaskError:  # another replica ended the task, or holds it, by now
            return await self._not_canceled(run.task_id)

    async def _cancel_held(self, run: Run) -> Task:
        task = run.task
        task_id = run.task_id
        assert task is not None
        if task.status.state.is_terminal:
            raise TaskNotCancelable(f"task {task_id} is already {task.status.state.value}")
        if run.worker is not None and not run.worker.done():
            await self.lifecycle.ask_to_cancel(run)
            run.worker.cancel()
        elif run.worker is None and task.status.state.is_interrupted:
            # No run is active, but the agent may hold work of its own for the task (a host
            # follows remote tasks that asked): its cancel hook gets the task to clean up.
            await self.lifecycle.ask_to_cancel(run)
        if not task.status.state.is_terminal:
            await self.lifecycle.emit(
                run, status_event(task.id, task.context_id, TaskState.CANCELED)
            )
        return task


def detached_run(stored: StoredTask, call: CallContext | None = None) -> Run:
    """A run with no message behind it, to change a task no live run holds: for `call`,
    else for the task's owner as the store has it."""
    task = stored.task
    context = RequestContext(
        message=_placeholder(task),
        task_id=task.id,
        context_id=task.context_id,
        task=task,
        call=call,
        task_owner=Principal.of_owner(stored.owner),
    )
    return Run(context, task, stored.seq, stored.owner, epoch=stored.epoch)


def _placeholder(task: Task) -> Message:
    """The message a cancel-only context carries: the last one the task received."""
    for message in reversed(task.history or ()):
        if message.role is Role.USER:
            return message
    return Message(message_id=new_id(), role=Role.USER, parts=[], task_id=task.id)
