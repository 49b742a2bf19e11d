"""TaskRuntime: runs executors and turns what they emit into persisted, published task events."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from functools import partial

from pydantic_core import PydanticSerializationError

from accord.agents.context import RequestContext
from accord.agents.executor import AgentEvent, AgentExecutor, EventSink
from accord.core.call_context import CallContext
from accord.core.deliveries import Delivery
from accord.core.failures import report_failure
from accord.core.futures import mark_seen
from accord.core.principal import ANONYMOUS_OWNER, Principal
from accord.core.push import TASK_SNAPSHOTS, PushTarget
from accord.core.query import RUNNING_STATES
from accord.core.records import EventRecord
from accord.errors import (
    A2AError,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
)
from accord.runtime.bus import EventBus, InProcessEventBus, StreamOverrun, Subscription
from accord.runtime.delivery import DeliveryWorker
from accord.runtime.publishing import PublishQueue
from accord.runtime.push import PushSender
from accord.runtime.replicas import HANDOVER_TIMEOUT, Replicas
from accord.runtime.state_machine import TaskChange, apply_event, is_final, new_task
from accord.store import InMemoryTaskStore, LostTaskError, StoredTask, TaskStore
from accord.types import (
    Message,
    MessageSendParams,
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
# The most records a run stages as one save.
_EVENTS_PER_SAVE = 64
CATCH_UP = 256
"""Records a reader catching up reads from the log at a time."""
# Generators of closed executions being closed: kept until done, so none is collected first.
_closing: set[asyncio.Future[None]] = set()
# Runs that lost their task being stopped: kept until done, as above.
_giving_up: set[asyncio.Task[None]] = set()


@dataclass(eq=False)
class _Run:
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
    # The epoch of this replica's claim on the task, which its saves are fenced by.
    epoch: int = 0
    # Whether the store refused a save for the task being another's (or over) by now.
    lost: bool = False

    @property
    def task_id(self) -> str:
        return self.context.task_id


class _RunSink(EventSink):
    def __init__(self, runtime: TaskRuntime, run: _Run) -> None:
        self._runtime = runtime
        self._run = run
        self._sent = 0

    async def send(self, event: AgentEvent) -> None:
        await self._runtime._emit(self._run, event)
        self._sent += 1
        if self._sent % EVENTS_PER_TURN == 0:
            # A store that never suspends (memory) would let an agent that awaits nothing else
            # keep the event loop to its end: streams would get nothing until then, and every
            # other request would wait. Every so many events it lets them go first.
            await asyncio.sleep(0)


class Execution(AsyncIterator[EventRecord]):
    """The records of one request's run, from its first event to its final one."""

    def __init__(self, runtime: TaskRuntime, run: _Run, subscription: Subscription) -> None:
        self.task_id = run.task_id
        self._runtime = runtime
        self._run = run
        self._subscription = subscription
        # Where the records come from after the subscription fell behind: the task's log.
        self._catching_up: AsyncGenerator[EventRecord, None] | None = None
        self._done = False

    @property
    def task(self) -> Task | None:
        """The task as this run holds it (None until the agent created one): what the store
        has, without reading it back."""
        return self._run.task

    async def __anext__(self) -> EventRecord:
        if self._done:
            raise StopAsyncIteration
        if self._catching_up is not None:
            record = await anext(self._catching_up)
        else:
            try:
                record = await anext(self._subscription)
            except StreamOverrun as overrun:  # the rest from the log, then live again
                self._subscription.close()
                seen = overrun.data["lastEventId"]
                self._catching_up = self._runtime.watch(self.task_id, after_seq=seen)
                record = await anext(self._catching_up)
        if record.final:
            self.close()
        return record

    def skip_to_final(self) -> None:
        """From now on, yield only the final record: the reply, the error, or the task as it
        ended or paused for the client."""
        self._subscription.finals_only = True

    def close(self) -> None:
        """Stop watching; the agent keeps running."""
        self._done = True
        self._subscription.close()
        if self._catching_up is not None:
            _closing.add(task := asyncio.ensure_future(self._catching_up.aclose()))
            task.add_done_callback(_closing.discard)


class TaskRuntime:
    """Runs the executor for incoming messages and owns every change to every task.

    Each change goes through the state machine, gets the next sequence number of its task,
    is saved with the task and then published. Locks are per task; nothing is global.
    An executor that raises fails its task with a message naming a reference to the error in
    the log; with `debug`, the message also holds the exception's type and text.

    Among replicas (`Replicas`): a replica silent for `runner_ttl` seconds loses its running
    tasks to the others; a cancel for a task running elsewhere waits `handover_timeout`
    seconds for its runner before canceling it here. Every run writes under the epoch of its
    claim on the task, so a run whose task was claimed by another replica meanwhile (or ended
    there) has every save refused: it is stopped, and the task stays as the other left it.
    """

    def __init__(
        self,
        executor: AgentExecutor,
        store: TaskStore | None = None,
        bus: EventBus | None = None,
        *,
        runner_ttl: float = 15.0,
        handover_timeout: float = HANDOVER_TIMEOUT,
        push: PushSender | None = None,
        deliveries: DeliveryWorker | None = None,
        debug: bool = False,
    ) -> None:
        self.executor = executor
        self.debug = debug
        self.store = store if store is not None else InMemoryTaskStore()
        self.bus = bus if bus is not None else InProcessEventBus()
        self.replica_id: str = getattr(self.bus, "replica_id", None) or new_id()
        self.runner_ttl = runner_ttl
        self.push = push
        # Webhook deliveries go to the store's outbox with their event; this sends them.
        self.deliveries = deliveries
        if deliveries is None and push is not None:
            self.deliveries = DeliveryWorker(self.store, push)
        self._runs: dict[str, _Run] = {}
        self.replicas = Replicas(
            self,
            self.store,
            self.bus,
            self.replica_id,
            runner_ttl,
            restartable=executor.restartable,
            handover_timeout=handover_timeout,
        )

    async def open(self) -> None:
        """Connect the bus and take up this replica's duties among the others."""
        await self.bus.start()
        await self.replicas.open()
        if self.deliveries is not None:
            self.deliveries.start()

    async def start(
        self,
        params: MessageSendParams,
        *,
        call: CallContext | None = None,
        create_if_missing: bool = False,
        push_format: str = TASK_SNAPSHOTS,
    ) -> Execution:
        """Start the executor on a message; the Execution yields what follows.

        A message naming a task continues it. With `create_if_missing`, one naming a task that
        does not exist starts it under that id (A2A 0.1 clients choose their task ids). A push
        config in the message's configuration is sent in the payload format `push_format`.
        `call` is the request the message came with, as the executor's context shows it; its
        principal owns the task, and may neither continue another's task (TaskNotFound) nor
        start one in another's context (InvalidParams).
        """
        message = params.message
        owner = call.principal.owner if call is not None else ANONYMOUS_OWNER
        found = (
            await self._resumable(message, owner, create_if_missing) if message.task_id else None
        )
        task, seq = found or (None, 0)
        if task is not None:
            task_id, context_id = task.id, task.context_id
        else:
            if message.context_id:
                await self._check_context(message.context_id, owner)
            task_id, context_id = message.task_id or new_id(), message.context_id or new_id()
        if message.task_id != task_id or message.context_id != context_id:
            message = message.model_copy(update={"task_id": task_id, "context_id": context_id})
        context = RequestContext(
            message=message,
            task_id=task_id,
            context_id=context_id,
            task=task,
            configuration=params.configuration,
            metadata=params.metadata or {},
            call=call,
        )
        if task_id in self._runs:  # another message for this task got in while we awaited
            raise UnsupportedOperation(f"task {task_id} is already handling another message")
        run = _Run(context, task, seq, owner)
        inline_push = params.configuration and params.configuration.push_notification_config
        if inline_push:  # the service saves it; until then this run already knows it
            run.push_configs = [PushTarget(inline_push, push_format)]
        self._runs[task_id] = run
        subscription = self.bus.subscribe(task_id)
        if task is not None:
            try:
                task = await self._claim_stored(run, seq)
            except BaseException:
                subscription.close()
                if self._runs.get(task_id) is run:
                    del self._runs[task_id]
                raise
            async with run.lock:
                await self._load_push_configs(run)
                apply_event(task, message)
                await self._record(run, task, final=False)
        run.worker = asyncio.create_task(self._execute(run), name=f"accord-task-{task_id}")
        return Execution(self, run, subscription)

    async def _claim_stored(self, run: _Run, seq: int) -> Task:
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

    async def _resumable(
        self, message: Message, owner: str, create_if_missing: bool = False
    ) -> tuple[Task, int] | None:
        assert message.task_id is not None
        running = self._runs.get(message.task_id)
        if running is not None and running.owner != owner:
            raise TaskNotFound(f"no task with id {message.task_id!r}")
        if running is not None and running.worker is not None:
            if running.task is None or not running.task.status.state.is_interrupted:
                raise UnsupportedOperation(
                    f"task {message.task_id} is still running; send the next message once it"
                    " asks for input"
                )
            await asyncio.wait({running.worker}, timeout=self.replicas.handover_timeout)
            if not running.worker.done():
                raise UnsupportedOperation(f"task {message.task_id} has not released its run yet")
        stored = await self.store.get(message.task_id, owner)
        if stored is None:
            if create_if_missing and await self.store.get(message.task_id) is None:
                return None
            raise TaskNotFound(f"no task with id {message.task_id!r}")
        task = stored.task
        if task.status.state.is_terminal:
            raise UnsupportedOperation(
                f"task {task.id} is {task.status.state.value}; a finished task accepts no messages"
            )
        if task.status.state in RUNNING_STATES:
            raise UnsupportedOperation(
                f"task {task.id} is {task.status.state.value} on another replica; send the next"
                " message once it asks for input"
            )
        if message.context_id and message.context_id != task.context_id:
            raise InvalidParams(
                f"contextId {message.context_id!r} does not match task {task.id}'s context"
                f" {task.context_id!r}"
            )
        return task, stored.seq

    async def _check_context(self, context_id: str, owner: str) -> None:
        """Refuse a new task in a context whose tasks another caller owns."""
        context_owner = await self.store.context_owner(context_id)
        if context_owner is not None and context_owner != owner:
            raise InvalidParams(
                f"contextId {context_id!r} is not a context of this caller; leave it out to"
                " start a new one"
            )

    async def get_task(self, task_id: str, owner: str | None = None) -> Task:
        """The current state of a task (of `owner`, when given: another's is TaskNotFound)."""
        return (await self._current(task_id, owner))[0]

    def _live(self, task_id: str, owner: str | None) -> _Run | None:
        """The run of this replica that holds the task, if any; TaskNotFound when another
        caller than `owner` (when given) owns it."""
        run = self._runs.get(task_id)
        if run is None or run.task is None or run.lost:
            return None
        if owner is not None and run.owner != owner:
            raise TaskNotFound(f"no task with id {task_id!r}")
        return run

    async def _stored(self, task_id: str, owner: str | None) -> StoredTask:
        stored = await self.store.get(task_id, owner)
        if stored is None:
            raise TaskNotFound(f"no task with id {task_id!r}")
        return stored

    async def watch(
        self, task_id: str, after_seq: int | None = None, owner: str | None = None
    ) -> AsyncGenerator[EventRecord, None]:
        """Follow a task until it ends: through every turn, a pause for the client's input
        included (a subscription lasts while the task is not terminal).

        Without `after_seq`: the task as it is now, then each change. With it (the last
        sequence number the caller saw): exactly the logged events it missed, then live ones;
        when the log no longer reaches back that far, the current task stands in for them.
        A reader that falls too far behind the live events (StreamOverrun) catches up from
        the log the same way, a page at a time, and goes on live. Another caller than
        `owner` (when given) gets TaskNotFound.
        """
        while True:
            subscription = self.bus.subscribe(task_id)
            try:
                async for record in self._follow(subscription, task_id, after_seq, owner):
                    yield record
                    after_seq = record.seq
                return
            except StreamOverrun:
                continue  # from the log, after the last record yielded
            finally:
                subscription.close()

    async def _follow(
        self, subscription: Subscription, task_id: str, after_seq: int | None, owner: str | None
    ) -> AsyncIterator[EventRecord]:
        """One round of `watch` on `subscription`: what the log holds after `after_seq` (or
        the task as it is now), then live records until the task ends."""
        if after_seq is None:
            task, seq = await self._current(task_id, owner)
        else:  # measured against the log: a live run's task can be ahead of its saves
            stored = await self._stored(task_id, owner)
            task, seq = stored.task, stored.seq
        # As of now: a store may hand out the live task, which moves on while this goes.
        ended = task.status.state.is_terminal
        missed = [] if after_seq is None else await self._logged(task_id, after_seq)
        if after_seq is not None and (
            missed[0].seq == after_seq + 1 if missed else after_seq >= seq
        ):
            last = after_seq
            while missed:
                for record in missed:
                    yield record
                    last = record.seq
                    if record.ends_task:
                        return
                missed = await self._logged(task_id, last) if len(missed) == CATCH_UP else []
            if ended and last >= seq:
                if last == after_seq:  # the caller has seen the end already
                    raise _nothing_to_follow(task)
                return
        else:
            if ended:
                raise _nothing_to_follow(task)
            # Not final even when the task waits for input: this stream goes on.
            yield EventRecord.of(task_id, seq, task, final=False)
            last = seq
        async for record in subscription:
            if record.seq <= last:
                continue
            yield record
            if record.ends_task:
                return

    async def _logged(self, task_id: str, after_seq: int) -> list[EventRecord]:
        """The next page of a task's log after `after_seq` (CATCH_UP records at most)."""
        return await self.store.events_after(task_id, after_seq, limit=CATCH_UP)

    async def _current(self, task_id: str, owner: str | None = None) -> tuple[Task, int]:
        run = self._live(task_id, owner)
        if run is not None:
            assert run.task is not None
            return run.task, run.seq
        stored = await self._stored(task_id, owner)
        return stored.task, stored.seq

    async def cancel(
        self, task_id: str, owner: str | None = None, *, call: CallContext | None = None
    ) -> Task:
        """Ask the agent to stop, then make sure the task ends canceled (another caller than
        `owner`, when given, gets TaskNotFound). `call` is the request asking, when there is
        one: the agent's cancel hook sees it when no run of the task is live."""
        run = self._live(task_id, owner)
        if run is not None:
            return await self._cancel_run(run)
        stored = await self._stored(task_id, owner)
        state = stored.task.status.state
        if state.is_terminal:
            raise TaskNotCancelable(f"task {task_id} is already {state.value}")
        if state in RUNNING_STATES and self.bus.distributed:
            if await self.replicas.cancel_elsewhere(task_id):
                return (await self._current(task_id))[0]
            stored = await self.store.get(task_id) or stored
        # No live run holds the task (it waits for input, or its runner is gone): cancel it
        # under a run of our own, registered so that no new message starts one meanwhile, and
        # claimed, so that a runner that only stalled cannot write to it any more.
        run = self._detached_run(stored, call)
        if self._runs.setdefault(task_id, run) is not run:
            raise UnsupportedOperation(f"task {task_id} is starting a run; try again")
        try:
            if self.store.tracks_runners:
                claimed = await self.store.claim(task_id, self.replica_id, at_seq=stored.seq)
                if claimed is None:
                    return await self._not_canceled(task_id)
                run = self._detached_run(claimed, call)
                self._runs[task_id] = run
            return await self._cancel_run(run)
        finally:
            if self._runs.get(task_id) is run:
                del self._runs[task_id]

    async def _not_canceled(self, task_id: str) -> Task:
        """The answer to a cancel whose claim found the task moved on: not cancelable once it
        has ended, else a race to try again."""
        stored = await self._stored(task_id, None)
        state = stored.task.status.state
        if state.is_terminal:
            raise TaskNotCancelable(f"task {task_id} is already {state.value}")
        raise UnsupportedOperation(f"task {task_id} changed while being canceled; try again")

    def is_running(self, task_id: str) -> bool:
        """Whether an executor of this replica is working on the task."""
        run = self._runs.get(task_id)
        return run is not None and run.worker is not None and not run.worker.done() and not run.lost

    def running_for(self, owner: str) -> int:
        """How many executors of this replica work on messages callers of `owner`
        (`Principal.owner`) sent."""
        return sum(
            1
            for run in self._runs.values()
            if run.worker is not None
            and not run.worker.done()
            and run.context.principal.owner == owner
        )

    def _detached_run(self, stored: StoredTask, call: CallContext | None = None) -> _Run:
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
        return _Run(context, task, stored.seq, stored.owner, epoch=stored.epoch)

    async def _cancel_run(self, run: _Run) -> Task:
        try:
            return await self._cancel_held(run)
        except LostTaskError:  # another replica ended the task, or holds it, by now
            return await self._not_canceled(run.task_id)

    async def _cancel_held(self, run: _Run) -> Task:
        task = run.task
        task_id = run.task_id
        assert task is not None
        if task.status.state.is_terminal:
            raise TaskNotCancelable(f"task {task_id} is already {task.status.state.value}")
        if run.worker is not None and not run.worker.done():
            await self._ask_executor_to_cancel(run)
            run.worker.cancel()
        elif run.worker is None and task.status.state.is_interrupted:
            # No run is active, but the agent may hold work of its own for the task (a host
            # follows remote tasks that asked): its cancel hook gets the task to clean up.
            await self._ask_executor_to_cancel(run)
        if not task.status.state.is_terminal:
            await self._emit(run, _status_event(task.id, task.context_id, TaskState.CANCELED))
        return task

    async def _ask_executor_to_cancel(self, run: _Run) -> None:
        """The executor's cancel hook; an A2AError it raises refuses the cancel, anything else
        is logged and the task is canceled all the same."""
        try:
            await self.executor.cancel(run.context, _RunSink(self, run))
        except (A2AError, LostTaskError):
            raise
        except Exception:
            log.exception("executor.cancel failed for task %s", run.task_id)

    async def close(self) -> None:
        """Stop every run still going and, once what they staged is saved, let other replicas
        take over their tasks at once."""
        runs = list(self._runs.values())
        workers = [run.worker for run in runs if run.worker is not None]
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        # A replica taking a task over continues from the task as saved: a save of ours that
        # committed after it read the task would make its own stale, and the task stuck.
        for run in runs:
            self._stage_unstaged(run)
        saves = [run.last_save for run in runs if run.last_save is not None]
        if saves:
            await asyncio.wait(saves)
        await self.replicas.close()
        await self.bus.close()
        if self.deliveries is not None:
            await self.deliveries.close()
        if self.push is not None:
            await self.push.close()

    async def recover_orphans(self) -> int:
        """Adopt the tasks of replicas that died (see `Replicas.recover_orphans`)."""
        return await self.replicas.recover_orphans()

    async def resume(self, stored: StoredTask) -> None:
        """Run an adopted task's executor again, from its last saved state."""
        run = self._detached_run(stored)
        if self._runs.setdefault(run.task_id, run) is not run:
            return
        note = "Resumed: the server that was running this task stopped"
        await self._emit(
            run, _status_event(run.task_id, run.context.context_id, TaskState.WORKING, note)
        )
        run.worker = asyncio.create_task(self._execute(run), name=f"accord-task-{run.task_id}")

    async def abandon(self, stored: StoredTask) -> None:
        """End an adopted task failed: the server running it stopped."""
        run = self._detached_run(stored)
        if self._runs.setdefault(run.task_id, run) is not run:
            return
        reason = "The server running this task stopped before it finished"
        try:
            await self._emit(
                run, _status_event(run.task_id, run.context.context_id, TaskState.FAILED, reason)
            )
        finally:
            if self._runs.get(run.task_id) is run:
                del self._runs[run.task_id]

    async def _execute(self, run: _Run) -> None:
        try:
            await self.executor.execute(run.context, _RunSink(self, run))
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            if not (run.lost or isinstance(exc, LostTaskError)):
                await self._failed(run, exc)
        else:
            if run.lost:
                return
            if run.task is None and not run.replied:
                error = InvalidAgentResponse("the agent finished without sending any reply")
                await self.bus.publish(EventRecord.failure(run.task_id, error))
            elif run.task is not None and not (
                run.reached_final and is_final(run.task.status.state)
            ):
                await self._fail(run, "The agent returned without finishing the task")
        finally:
            if self._runs.get(run.task_id) is run:
                del self._runs[run.task_id]

    async def _failed(self, run: _Run, exc: Exception) -> None:
        """End the run of an executor that raised `exc`."""
        if not isinstance(exc, A2AError):
            where = f"task {run.task_id}"
            reason = report_failure(log, "The agent failed", exc, debug=self.debug, where=where)
            await self._fail(run, reason)
        elif run.task is None and not run.replied:
            await self.bus.publish(EventRecord.failure(run.task_id, exc))
        else:
            await self._fail(run, f"{type(exc).__name__}: {exc.message}")

    async def _fail(self, run: _Run, reason: str) -> None:
        if run.task is not None and run.task.status.state.is_terminal:
            if not run.reached_final:  # its end was applied but never saved nor published
                await self._end_with_error(run, reason)
            return
        if run.replied:
            log.warning("agent error after its reply on %s: %s", run.task_id, reason)
            return
        event = _status_event(run.task_id, run.context.context_id, TaskState.FAILED, reason)
        try:
            await self._emit(run, event)
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

    async def _end_with_error(self, run: _Run, message: str) -> None:
        """End what waits on the run with an error: it will get no final record of the task."""
        await self.bus.publish(EventRecord.failure(run.task_id, InternalError(message)))

    async def _emit(self, run: _Run, event: AgentEvent) -> None:
        async with run.lock:
            if run.lost:  # numbered and staged, it would only be refused
                raise LostTaskError(f"task {run.task_id} is no longer this replica's")
            await self._load_push_configs(run)
            payload = _serialized(event)
            if run.task is None:
                if run.replied:
                    raise InvalidAgentResponse("the agent already replied with a message")
                if isinstance(event, Message):
                    await self._reply(run, event, payload)
                    return
                run.task = new_task(run.task_id, run.context.context_id, run.context.message)
                run.context.task = run.task
                self._claim(run)
                await self._record(run, run.task, final=False)
            change = apply_event(run.task, event)
            final = isinstance(change, TaskStatusUpdateEvent | Task) and is_final(
                change.status.state
            )
            await self._record(
                run, change, final=final, payload=payload if change is event else None
            )

    async def _reply(self, run: _Run, message: Message, payload: bytes) -> None:
        run.replied = True
        if message.context_id is None:
            message = message.model_copy(update={"context_id": run.context.context_id})
            payload = message.to_json()
        await self.bus.publish(EventRecord(run.task_id, 0, message, True, payload))

    async def _record(
        self, run: _Run, change: TaskChange, *, final: bool, payload: bytes | None = None
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
        run.unstaged_outbox += self._outbox(run, record)
        if not final:
            if len(run.unstaged) >= _EVENTS_PER_SAVE:
                self._stage_unstaged(run)
            elif len(run.unstaged) == 1:
                asyncio.get_running_loop().call_soon(self._stage_unstaged, run)
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
                await self._publish(run, each)
        else:
            run.publishing.add(records, saved)
            await run.publishing.settle(everything=True)
        run.reached_final = True

    def _stage_unstaged(self, run: _Run) -> None:
        """Stage what the run recorded in the turn that just ended (nothing, when a final
        record or a full burst staged it already)."""
        if run.unstaged:
            self._publishing(run).add(*self._stage(run))

    def _stage(self, run: _Run) -> tuple[list[EventRecord], asyncio.Future[None]]:
        """Hand the run's unstaged records to the store as one save; they and its future."""
        assert run.task is not None
        records, run.unstaged = run.unstaged, []
        outbox, run.unstaged_outbox = run.unstaged_outbox, []
        try:
            saved = self.store.stage_records(
                run.task, records, owner=run.owner, outbox=outbox, epoch=run.epoch
            )
        except Exception as exc:  # as if the save had failed: the run learns it on its next record
            saved = asyncio.get_running_loop().create_future()
            saved.set_exception(exc)
        saved.add_done_callback(partial(self._check_saved, run, records[0].seq))
        if outbox and self.deliveries is not None:
            saved.add_done_callback(partial(_wake_on_commit, self.deliveries))
        run.last_save = saved
        return records, saved

    def _check_saved(self, run: _Run, first_seq: int, saved: asyncio.Future[None]) -> None:
        """After a save of the run: if the store refused it as no longer this replica's task,
        give the task up (once)."""
        if saved.cancelled() or not isinstance(saved.exception(), LostTaskError):
            return
        run.seq = min(run.seq, first_seq - 1)  # what it refused does not count
        if not run.lost:
            run.lost = True
            error = saved.exception()
            stopping = asyncio.get_running_loop().create_task(self._give_up(run, str(error)))
            _giving_up.add(stopping)
            stopping.add_done_callback(_giving_up.discard)

    async def _give_up(self, run: _Run, reason: str) -> None:
        """Stop the run of a task this replica lost (another replica claimed it, or ended it,
        while this one stalled): its executor is asked to cancel and stopped, nothing of it is
        saved or published, and the task is read from the store from now on."""
        if self._runs.get(run.task_id) is run:
            del self._runs[run.task_id]
        log.warning(
            "task %s is no longer this replica's (%s): another replica took it over or ended it;"
            " its executor here is stopped",
            run.task_id,
            reason,
        )
        try:
            await self.executor.cancel(run.context, _RunSink(self, run))
        except (A2AError, LostTaskError):
            pass
        except Exception:
            log.exception("executor.cancel failed for task %s", run.task_id)
        if run.worker is not None and run.worker is not asyncio.current_task():
            run.worker.cancel()

    def _publishing(self, run: _Run) -> PublishQueue:
        if run.publishing is None:
            run.publishing = PublishQueue(partial(self._publish, run))
        return run.publishing

    def _claim(self, run: _Run) -> None:
        """Record this replica as the runner of the run's task, committed with its first save
        at the latest (a task without a live runner is an orphan to the other replicas)."""
        if self.store.tracks_runners:
            run.claimed = self.store.stage_claim(run.task_id, self.replica_id)
            run.claimed.add_done_callback(mark_seen)  # a run may end before it waits for it

    async def _publish(self, run: _Run, record: EventRecord) -> None:
        await self.bus.publish(record)

    async def _load_push_configs(self, run: _Run) -> None:
        """Know the task's webhooks before its next change (only a replica that sends
        webhooks needs them)."""
        if self.deliveries is not None and run.push_configs is None:
            run.push_configs = await self.store.list_push_configs(run.task_id)

    def _outbox(self, run: _Run, record: EventRecord) -> list[Delivery]:
        """The webhook deliveries `record` causes, each in its payload format, bodies made from
        the task as it is now (only the replica running the task makes them)."""
        if self.deliveries is None or not run.push_configs:
            return []
        assert run.task is not None
        return self.deliveries.outbox(run.task_id, run.seq, run.push_configs, record, run.task)

    def push_configs_changed(self, task_id: str) -> None:
        """A webhook of the task was set or deleted: reload them before the next update."""
        run = self._runs.get(task_id)
        if run is not None:
            run.push_configs = None


def _wake_on_commit(deliveries: DeliveryWorker, saved: asyncio.Future[None]) -> None:
    if not saved.cancelled() and saved.exception() is None:
        deliveries.wake()


def _serialized(event: AgentEvent) -> bytes:
    """The event's JSON; an event that has none is refused before it changes the task."""
    try:
        return event.to_json()
    except PydanticSerializationError as exc:
        raise InvalidAgentResponse(
            f"the agent sent a {event.kind} that cannot be serialized: {exc}"
        ) from None


def _status_event(
    task_id: str, context_id: str, state: TaskState, text: str | None = None
) -> TaskStatusUpdateEvent:
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


def _nothing_to_follow(task: Task) -> UnsupportedOperation:
    state = task.status.state.value
    return UnsupportedOperation(f"task {task.id} is {state}; there is nothing to follow")


def _placeholder(task: Task) -> Message:
    """The message a cancel-only context carries: the last one the task received."""
    for message in reversed(task.history or ()):
        if message.role is Role.USER:
            return message
    return Message(message_id=new_id(), role=Role.USER, parts=[], task_id=task.id)
