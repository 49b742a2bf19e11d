"""TaskRuntime: runs executors and turns what they emit into persisted, published task events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable

from accord.agents.context import RequestContext
from accord.agents.executor import AgentExecutor
from accord.core.call_context import CallContext
from accord.core.principal import ANONYMOUS_OWNER
from accord.core.push import TASK_SNAPSHOTS, PushTarget
from accord.core.query import RUNNING_STATES
from accord.core.records import EventRecord
from accord.errors import InvalidAgentResponse, InvalidParams, TaskNotFound, UnsupportedOperation
from accord.runtime.bus import EventBus, InProcessEventBus
from accord.runtime.delivery import DeliveryWorker
from accord.runtime.follow import Execution, Follower
from accord.runtime.handover import Handover
from accord.runtime.lifecycle import RunLifecycle
from accord.runtime.push import PushSender
from accord.runtime.replicas import HANDOVER_TIMEOUT, Replicas
from accord.runtime.runs import Run, Runs
from accord.runtime.staging import Staging
from accord.runtime.state_machine import apply_event
from accord.runtime.watched_calls import (
    BUS_CALLS,
    IN_PROCESS,
    STORE_CALLS,
    CallWatcher,
    watch_methods,
)
from accord.store import InMemoryTaskStore, StoredTask, TaskStore
from accord.types import Message, MessageSendParams, Task, new_id


class TaskRuntime:
    """Runs the executor for incoming messages and owns every change to every task.

    Each change goes through the state machine, gets the next sequence number of its task,
    is saved with the task and then published (`Staging`). Locks are per task; nothing is
    global. An executor that raises fails its task with a message naming a reference to the
    error in the log; with `debug`, the message also holds the exception's type and text
    (`RunLifecycle`). Streams follow a task live and catch up from its log (`Follower`).

    Among replicas (`Replicas`): a replica silent for `runner_ttl` seconds loses its running
    tasks to the others; a cancel for a task running elsewhere waits `handover_timeout`
    seconds for its runner before canceling it here (`Handover`). Every run writes under the
    epoch of its claim on the task, so a run whose task was claimed by another replica
    meanwhile (or ended there) has every save refused: it is stopped, and the task stays as
    the other left it.
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
        self.store = store if store is not None else InMemoryTaskStore()
        self.bus = bus if bus is not None else InProcessEventBus()
        self.replica_id: str = getattr(self.bus, "replica_id", None) or new_id()
        self.runner_ttl = runner_ttl
        self.push = push
        # Webhook deliveries go to the store's outbox with their event; this sends them.
        self.deliveries = deliveries
        if deliveries is None and push is not None:
            self.deliveries = DeliveryWorker(self.store, push)
        self._store_watchers: list[CallWatcher] = []
        self._bus_watchers: list[CallWatcher] = []
        self._runs = Runs(self.bus)
        self._staging = Staging(
            self.store, self.bus, self.replica_id, self.deliveries, on_lost=self._lost
        )
        self._lifecycle = RunLifecycle(executor, self._runs, self._staging, self.bus, debug)
        self._follower = Follower(self.store, self.bus, self._runs)
        self.replicas = Replicas(
            self,
            self.store,
            self.bus,
            self.replica_id,
            runner_ttl,
            restartable=executor.restartable,
            handover_timeout=handover_timeout,
        )
        self._handover = Handover(
            self.store,
            self.bus,
            self.replica_id,
            self._runs,
            self._lifecycle,
            self._follower,
            self.replicas,
        )

    def watch_calls(self, watcher: CallWatcher, *, store: bool = True, bus: bool = True) -> None:
        """Have `watcher` see each call the runtime makes into its store (saves, task and log
        reads, listings) and its bus (publishing, cancel requests) from now on: observability's
        seam for spans and latencies. Until a first watcher comes, nothing is wrapped; a
        memory store's or the in-process bus's calls, plain function calls not worth a span's
        or a timer's cost, never are."""
        for wanted, watchers, target, calls, component in (
            (store, self._store_watchers, self.store, STORE_CALLS, "store"),
            (bus, self._bus_watchers, self.bus, BUS_CALLS, "bus"),
        ):
            if not wanted or target.system in IN_PROCESS:
                continue
            if not watchers:
                watch_methods(target, component, calls, watchers)
            watchers.append(watcher)

    def wrap_executor(self, wrap: Callable[[AgentExecutor], AgentExecutor]) -> None:
        """Run the executor as `wrap(executor)` from now on (observability's seam: a span or
        a gauge around each run)."""
        self.executor = self._lifecycle.executor = wrap(self.executor)

    @property
    def debug(self) -> bool:
        """Whether a failed task's message holds the exception's type and text."""
        return self._lifecycle.debug

    @debug.setter
    def debug(self, debug: bool) -> None:
        self._lifecycle.debug = debug

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
        prepared: object = None
        if task is not None:
            task_id, context_id = task.id, task.context_id
        else:
            if message.context_id:
                await self._check_context(message.context_id, owner)
            task_id, context_id, prepared = await self._named(params, call, owner)
        if message.task_id != task_id or message.context_id != context_id:
            message = message.copied_with(task_id=task_id, context_id=context_id)
        context = RequestContext(
            message=message,
            task_id=task_id,
            context_id=context_id,
            task=task,
            configuration=params.configuration,
            metadata=params.metadata or {},
            call=call,
            prepared=prepared,
        )
        if task_id in self._runs:  # another message for this task got in while we awaited
            raise UnsupportedOperation(f"task {task_id} is already handling another message")
        run = Run(context, task, seq, owner)
        inline_push = params.configuration and params.configuration.push_notification_config
        if inline_push:  # the service saves it; until then this run already knows it
            run.push_configs = [PushTarget(inline_push, push_format)]
        self._runs.replace(run)
        subscription = self.bus.subscribe(task_id)
        if task is not None:
            try:
                task = await self._staging.claim_stored(run, seq)
            except BaseException:
                subscription.close()
                self._runs.discard(run)
                raise
            async with run.lock:
                await self._staging.load_push_configs(run)
                apply_event(task, message)
                await self._staging.record(run, task, final=False)
        self._lifecycle.launch(run)
        return Execution(self._follower, run, subscription)

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

    async def _named(
        self, params: MessageSendParams, call: CallContext | None, owner: str
    ) -> tuple[str, str, object]:
        """The ids of the task a message starts (the agent's, when it names its tasks, else
        the message's or new ones) and what the agent prepared for its run."""
        message = params.message
        named = await self.executor.name_task(params, call)
        context_id = named.context_id or message.context_id or new_id()
        if named.context_id not in (None, message.context_id):
            await self._check_context(context_id, owner)
        if named.task_id is None:
            return message.task_id or new_id(), context_id, named.prepared
        if named.task_id in self._runs or await self.store.get(named.task_id) is not None:
            raise InvalidAgentResponse(
                f"the agent named its new task {named.task_id!r}, a task that exists already"
            )
        return named.task_id, context_id, named.prepared

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
        return (await self._follower.current(task_id, owner))[0]

    def watch(
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
        return self._follower.watch(task_id, after_seq, owner)

    async def cancel(
        self, task_id: str, owner: str | None = None, *, call: CallContext | None = None
    ) -> Task:
        """Ask the agent to stop, then make sure the task ends canceled (another caller than
        `owner`, when given, gets TaskNotFound). `call` is the request asking, when there is
        one: the agent's cancel hook sees it when no run of the task is live."""
        return await self._handover.cancel(task_id, owner, call)

    def is_running(self, task_id: str) -> bool:
        """Whether an executor of this replica is working on the task."""
        run = self._runs.get(task_id)
        return run is not None and run.working

    def running_for(self, owner: str) -> int:
        """How many executors of this replica work on messages callers of `owner`
        (`Principal.owner`) sent."""
        return self._runs.working_for(owner)

    async def close(self) -> None:
        """Stop every run still going and, once what they staged is saved, let other replicas
        take over their tasks at once."""
        runs = list(self._runs)
        await self._lifecycle.stop(runs)
        # A replica taking a task over continues from the task as saved: a save of ours that
        # committed after it read the task would make its own stale, and the task stuck.
        await self._staging.flush(runs)
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
        await self._handover.resume(stored)

    async def abandon(self, stored: StoredTask) -> None:
        """End an adopted task failed: the server running it stopped."""
        await self._handover.abandon(stored)

    def push_configs_changed(self, task_id: str) -> None:
        """A webhook of the task was set or deleted: reload them before the next update."""
        run = self._runs.get(task_id)
        if run is not None:
            run.push_configs = None

    def _lost(self, run: Run, reason: str) -> None:
        self._lifecycle.lost(run, reason)
