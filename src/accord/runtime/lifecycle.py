"""RunLifecycle: a run's executor from start to end, every event it emits made a task change."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from contextlib import suppress

from pydantic_core import PydanticSerializationError

from accord.agents.executor import AgentEvent, AgentExecutor, EventSink
from accord.core.failures import report_failure
from accord.core.records import EventRecord
from accord.errors import A2AError, InternalError, InvalidAgentResponse
from accord.runtime.bus import EventBus
from accord.runtime.runs import Run, Runs
from accord.runtime.staging import Staging
from accord.runtime.state_machine import IllegalTaskEvent, apply_event, is_final, new_task
from accord.store import LostTaskError
from accord.types import (
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    new_id,
    utc_now,
)

log = logging.getLogger("accord.runtime")

# How many events an agent may emit in a row before the rest of the server gets a turn.
EVENTS_PER_TURN = 8
# Runs that lost their task being stopped: kept until done, so none is collected first.
_giving_up: set[asyncio.Task[None]] = set()


class RunLifecycle:
    """Runs the executor of each run, and turns what it emits into the task's changes.

    Every event goes through the state machine under the run's lock and is recorded by
    `Staging`. An executor that raises fails its task with a message naming a reference to
    the error in the log; with `debug`, the message also holds the exception's type and text.
    A run whose task another replica claimed meanwhile (or ended there) is stopped (`lost`):
    its executor is asked to cancel, and nothing more of it is saved or published.
    """

    def __init__(
        self, executor: AgentExecutor, runs: Runs, staging: Staging, bus: EventBus, debug: bool
    ) -> None:
        self.executor = executor
        self.runs = runs
        self.staging = staging
        self.bus = bus
        self.debug = debug

    def launch(self, run: Run) -> None:
        """Start the run's executor; the run ends (and leaves `runs`) when it returns."""
        run.worker = asyncio.create_task(self._execute(run), name=f"accord-task-{run.task_id}")

    async def stop(self, runs: Iterable[Run]) -> None:
        """Cancel the executors of `runs`, and wait until they have stopped."""
        workers = [run.worker for run in runs if run.worker is not None]
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    async def emit(self, run: Run, event: AgentEvent) -> None:
        """Apply `event` to the run's task (creating it on the first event) and record it; a
        message before any task is the run's reply."""
        async with run.lock:
            if run.lost:  # numbered and staged, it would only be refused
                raise LostTaskError(f"task {run.task_id} is no longer this replica's")
            if run.push_configs is None:
                await self.staging.load_push_configs(run)
            if run.task is None and run.replied:
                raise InvalidAgentResponse("the agent already replied with a message")
            if run.task is None and isinstance(event, Task):
                await self._created_as(run, event)
                return
            payload = _serialized(event)
            if run.task is None:
                if isinstance(event, Message):
                    await self._reply(run, event, payload)
                    return
                created = self._new_task(run)
                self._adopt(run, created)
                await self.staging.record(run, created, final=False)
            assert run.task is not None
            change = apply_event(run.task, event)
            final = isinstance(change, (TaskStatusUpdateEvent, Task)) and is_final(
                change.status.state
            )
            await self.staging.record(
                run, change, final=final, payload=payload if change is event else None
            )

    async def _created_as(self, run: Run, snapshot: Task) -> None:
        """A first event that is the whole task (a relayed one): the task is created as it
        says and serialized once, before the run has it, so one that cannot be is refused
        without changing anything (its snapshot, serialized first, would be thrown away)."""
        if snapshot.id != run.task_id:
            raise IllegalTaskEvent(f"task {snapshot.id!r} sent in place of {run.task_id!r}")
        task = self._new_task(run)
        try:
            apply_event(task, snapshot)
        except IllegalTaskEvent:
            self._adopt(run, task)  # the task as created, failed by what follows
            raise
        payload = _serialized(task)
        self._adopt(run, task)
        await self.staging.record(run, task, final=is_final(task.status.state), payload=payload)

    @staticmethod
    def _new_task(run: Run) -> Task:
        return new_task(run.task_id, run.context.context_id, run.context.message)

    def _adopt(self, run: Run, task: Task) -> None:
        """The run's task from now on, claimed for this replica."""
        run.task = run.context.task = task
        self.staging.claim_new(run)

    async def ask_to_cancel(self, run: Run) -> None:
        """The executor's cancel hook; an A2AError it raises refuses the cancel, anything else
        is logged and the task is canceled all the same."""
        try:
            await self.executor.cancel(run.context, RunSink(self, run))
        except (A2AError, LostTaskError):
            raise
        except Exception:
            log.exception("executor.cancel failed for task %s", run.task_id)

    def lost(self, run: Run, reason: str) -> None:
        """Stop the run of a task this replica lost (another replica claimed it, or ended it,
        while this one stalled), in the background."""
        stopping = asyncio.get_running_loop().create_task(self._give_up(run, reason))
        _giving_up.add(stopping)
        stopping.add_done_callback(_giving_up.discard)

    async def _give_up(self, run: Run, reason: str) -> None:
        """Its executor is asked to cancel and stopped, nothing of it is saved or published,
        and the task is read from the store from now on."""
        self.runs.discard(run)
        log.warning(
            "task %s is no longer this replica's (%s): another replica took it over or ended it;"
            " its executor here is stopped",
            run.task_id,
            reason,
        )
        with suppress(A2AError, LostTaskError):
            await self.ask_to_cancel(run)
        if run.worker is not None and run.worker is not asyncio.current_task():
            run.worker.cancel()

    async def _execute(self, run: Run) -> None:
        try:
            await self.executor.execute(run.context, RunSink(self, run))
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            if not (run.lost or isinstance(exc, LostTaskError)):
                await self._failed(run, exc)
        else:
            if run.lost:
                return
            # An end another call is recording (a cancel's) is recorded first. Not skipped when
            # the lock is free: a cancel woken by the run's last release holds no lock yet, but
            # stands first in line, and `async with` waits behind it.
            async with run.lock:
                pass
            if run.task is None and not run.replied:
                error = InvalidAgentResponse("the agent finished without sending any reply")
                await self.bus.publish(EventRecord.failure(run.task_id, error))
            elif run.task is not None and not (
                run.reached_final and is_final(run.task.status.state)
            ):
                await self._fail(run, "The agent returned without finishing the task")
        finally:
            self.runs.discard(run)

    async def _failed(self, run: Run, exc: Exception) -> None:
        """End the run of an executor that raised `exc`."""
        if not isinstance(exc, A2AError):
            where = f"task {run.task_id}"
            reason = report_failure(log, "The agent failed", exc, debug=self.debug, where=where)
            await self._fail(run, reason)
        elif run.task is None and not run.replied:
            await self.bus.publish(EventRecord.failure(run.task_id, exc))
        else:
            await self._fail(run, f"{type(exc).__name__}: {exc.message}")

    async def _fail(self, run: Run, reason: str) -> None:
        if run.task is not None and run.task.status.state.is_terminal:
            if not run.reached_final:  # its end was applied but never saved nor published
                await self._end_with_error(run, reason)
            return
        if run.replied:
            log.warning("agent error after its reply on %s: %s", run.task_id, reason)
            return
        event = status_event(run.task_id, run.context.context_id, TaskState.FAILED, reason)
        try:
            await self.emit(run, event)
        except Exception as exc:  # the store refuses this save too, say
            if run.lost or isinstance(exc, LostTaskError):
                return  # another replica holds the task: what it says of it stands
            where = f"task {run.task_id}"
            message = report_failure(
                log, "The task could not be saved", exc, debug=self.debug, where=where
            )
            await self._end_with_error(run, message)
        else:
            log.warning("task %s failed: %s", run.task_id, reason)

    async def _end_with_error(self, run: Run, message: str) -> None:
        """End what waits on the run with an error: it will get no final record of the task."""
        await self.bus.publish(EventRecord.failure(run.task_id, InternalError(message)))

    async def _reply(self, run: Run, message: Message, payload: bytes) -> None:
        run.replied = True
        if message.context_id is None:
            message = message.copied_with(context_id=run.context.context_id)
            payload = message.to_json()
        await self.bus.publish(EventRecord(run.task_id, 0, message, True, payload))


class RunSink(EventSink):
    """Where a run's executor sends its events."""

    def __init__(self, lifecycle: RunLifecycle, run: Run) -> None:
        self._lifecycle = lifecycle
        self._run = run
        self._sent = 0

    async def send(self, event: AgentEvent) -> None:
        await self._lifecycle.emit(self._run, event)
        self._sent += 1
        if self._sent % EVENTS_PER_TURN == 0:
            # A store that never suspends (memory) would let an agent that awaits nothing else
            # keep the event loop to its end: streams would get nothing until then, and every
            # other request would wait. Every so many events it lets them go first.
            await asyncio.sleep(0)


def status_event(
    task_id: str, context_id: str, state: TaskState, text: str | None = None
) -> TaskStatusUpdateEvent:
    """A status update of the task to `state`, with `text` as the agent's message."""
    message = None
    if text is not None:
        message = Message(
            message_id=new_id(),
            role=Role.AGENT,
            parts=[TextPart(text=text)],
            task_id=task_id,
            context_id=context_id,
        )
    return TaskStatusUpdateEvent(
        task_id=task_id,
        context_id=context_id,
        status=TaskStatus(state=state, message=message, timestamp=utc_now()),
        final=is_final(state),
    )


def _serialized(event: AgentEvent) -> bytes:
    """The event's JSON; an event that has none is refused before it changes the task."""
    try:
        return event.to_json()
    except PydanticSerializationError as exc:
        raise InvalidAgentResponse(
            f"the agent sent a {event.kind} that cannot be serialized: {exc}"
        ) from None
