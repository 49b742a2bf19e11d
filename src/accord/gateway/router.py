"""SkillRouter: each call of a gateway in front of several upstreams relayed to the right one."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from accord.agents import AgentEvent, AgentExecutor, EventSink, NamedTask, RequestContext
from accord.core.call_context import CallContext
from accord.core.query import TaskPage, TaskQuery
from accord.errors import InternalError, InvalidParams
from accord.gateway.executor import GatewayExecutor
from accord.gateway.skills import named_skill
from accord.gateway.sources import UpstreamSet
from accord.types import MessageSendParams, Task

UPSTREAM_KEY = "accord/upstream"
"""The task metadata key holding the name of the upstream a task belongs to."""

REPLY_CONTEXTS = 10_000
"""How many contexts known only from plain replies a router remembers the upstream of."""

PINNED: ContextVar[str | None] = ContextVar("accord_gateway_pinned", default=None)
"""The upstream a request's path prefix leads to (`several(routes=...)`), while it is served."""


class TaskLookup(Protocol):
    """The part of the gateway's store the router reads: which upstream a context's tasks
    belong to, after a restart too."""

    async def list_tasks(self, query: TaskQuery) -> TaskPage: ...


@dataclass(frozen=True, slots=True)
class Routed:
    """What `name_task` prepared: the upstream chosen, and what its executor prepared."""

    upstream: str
    prepared: object


class SkillRouter(AgentExecutor):
    """Relays each call to one upstream of `upstreams`, by this rule:

    1. a message continuing a task goes to the upstream of the task (the name each task
       keeps in its metadata, `UPSTREAM_KEY`, in the gateway's store); a message naming a
       context id of tasks here, to the upstream of that context; one naming a context an
       upstream answered with a plain reply (no task), to that upstream (`RecentContexts`);
    2. else to the upstream of the path prefix it came by (`PINNED`), if it has one;
    3. else to the upstream of the skill the message names (its metadata's `skill`, else the
       request's: a skill id of the gateway's card);
    4. else to `default`, else it is refused (InvalidParams) naming the skills there are.

    Cancel, and a task taken over after a restart, go to the task's upstream the same way;
    reads, resubscribing and push configs are the gateway's own (its store).
    """

    restartable = True

    def __init__(
        self, upstreams: UpstreamSet, default: str | None = None, tasks: TaskLookup | None = None
    ) -> None:
        if default is not None and default not in upstreams.executors:
            known = ", ".join(upstreams.executors)
            raise ValueError(f"the default upstream {default!r} is none of {known}")
        self.upstreams = upstreams
        self.default = default
        self.tasks = tasks
        self.replied = RecentContexts()

    def on_store(self, tasks: TaskLookup) -> SkillRouter:
        """This router reading the gateway's store `tasks` (one per app serving it)."""
        bound = copy.copy(self)
        bound.tasks = tasks
        return bound

    async def name_task(self, params: MessageSendParams, call: CallContext | None) -> NamedTask:
        await self.upstreams.refresh()
        name = await self._choose(params)
        with naming_upstream(name):
            named = await self._executor(name).name_task(params, call)
        return NamedTask(named.task_id, named.context_id, Routed(name, named.prepared))

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        routed = context.prepared
        if isinstance(routed, Routed):
            name = routed.upstream
            context.prepared = routed.prepared  # the relaying executor's own
        else:
            name = self._task_upstream(context)
        with naming_upstream(name):
            await self._executor(name).execute(context, Stamping(events, name))
        if context.task is None:  # a plain reply: its context is in no task of the store
            self.replied.remember(context.context_id, name)

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        name = self._task_upstream(context)
        with naming_upstream(name):
            await self._executor(name).cancel(context, Stamping(events, name))

    async def _choose(self, params: MessageSendParams) -> str:
        context_id = params.message.context_id
        if context_id and self.tasks is not None:
            page = await self.tasks.list_tasks(TaskQuery(context_id=context_id, page_size=1))
            for task in page.tasks:
                name = upstream_of(task)
                if name is not None and name in self.upstreams.executors:
                    return name
        if context_id:
            name = self.replied.upstream(context_id)
            if name is not None and name in self.upstreams.executors:
                return name
        pinned = PINNED.get()
        if pinned is not None:
            return pinned
        table = self.upstreams.table
        skill = named_skill(params)
        if skill is not None:
            return table.owner(skill)
        if self.default is not None:
            return self.default
        raise InvalidParams(f"this gateway serves several agents: {table.available()}")

    def _task_upstream(self, context: RequestContext) -> str:
        name = upstream_of(context.task) if context.task is not None else None
        if name is None or name not in self.upstreams.executors:
            raise InternalError(
                f"task {context.task_id} names no upstream this gateway knows ({name!r})"
            )
        return name

    def _executor(self, name: str) -> GatewayExecutor:
        return self.upstreams.executors[name]


class RecentContexts:
    """The upstream of each context an upstream answered with a plain reply, which leaves
    nothing in the store: the `limit` most recently used, in this process's memory (gone at
    a restart, as a reply is: the caller holds what there was of it)."""

    def __init__(self, limit: int = REPLY_CONTEXTS) -> None:
        self.limit = limit
        self._upstreams: dict[str, str] = {}  # least recently used first

    def upstream(self, context_id: str) -> str | None:
        name = self._upstreams.pop(context_id, None)
        if name is not None:
            self._upstreams[context_id] = name
        return name

    def remember(self, context_id: str, name: str) -> None:
        self._upstreams.pop(context_id, None)
        self._upstreams[context_id] = name
        if len(self._upstreams) > self.limit:
            del self._upstreams[next(iter(self._upstreams))]


def upstream_of(task: Task) -> str | None:
    """The name of the upstream `task` belongs to, as its metadata keeps it."""
    name = (task.metadata or {}).get(UPSTREAM_KEY)
    return name if isinstance(name, str) else None


class Stamping:
    """The sink of a relaying executor, each task snapshot it sends marked with the upstream's
    name (a snapshot's metadata replaces the task's: each one carries it)."""

    def __init__(self, events: EventSink, upstream: str) -> None:
        self.events = events
        self.upstream = upstream

    async def send(self, event: AgentEvent) -> None:
        if isinstance(event, Task) and upstream_of(event) != self.upstream:
            metadata = {**(event.metadata or {}), UPSTREAM_KEY: self.upstream}
            event = event.model_copy(update={"metadata": metadata})
        await self.events.send(event)


@contextmanager
def naming_upstream(name: str) -> Iterator[None]:
    """An InternalError about an upstream (down, its credentials refused) says which one."""
    try:
        yield
    except InternalError as exc:
        if exc.message.startswith("upstream "):
            raise
        raise InternalError(f"upstream {name!r}: {exc.message}") from None
