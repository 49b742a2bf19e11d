"""Watched calls: the runtime's calls into its store and bus, seen by watchers once installed.

Nothing here runs until a watcher is installed (`TaskRuntime.watch_calls`): the store and the
bus are then given, on the instance, a wrapper around each watched method, so every part of
the runtime that holds them sees the wrapped ones, and an app without watchers calls its
store and bus exactly as before.
"""

from __future__ import annotations

import inspect
from asyncio import Future
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial, wraps
from typing import Any, Protocol

CallEnd = Callable[[BaseException | None], None]


@dataclass(frozen=True, slots=True)
class WatchedCall:
    """One call into the store or the bus: which (`component`: `store` or `bus`), its
    `operation`, the backend's `system` (`TaskStore.system`, `EventBus.system`) and the task
    it concerns, when it concerns one."""

    component: str
    operation: str
    system: str
    task_id: str | None


class CallWatcher(Protocol):
    """Sees the calls into the store or the bus (a span, a latency histogram)."""

    def started(self, call: WatchedCall) -> CallEnd:
        """`call` starts, in its caller's context; what this returns is called once it has
        ended, with what it failed with (None: it succeeded). A save ends once committed."""
        ...


def _first(value: Any, *args: Any, **kwargs: Any) -> str:
    return str(value)


def _task_of(task: Any, *args: Any, **kwargs: Any) -> str:
    return str(task.id)


def _record_task(record: Any, *args: Any, **kwargs: Any) -> str:
    return str(record.task_id)


def _no_task(*args: Any, **kwargs: Any) -> None:
    return None


IN_PROCESS = frozenset({"memory", "in_process"})
"""The systems of a store and a bus that stay in the process (`TaskStore.system`,
`EventBus.system`): their calls are not watched."""

TaskOf = Callable[..., str | None]

STORE_CALLS: Mapping[str, tuple[str, TaskOf]] = {
    "stage_span": ("save", _task_of),  # every save the runtime stages, until committed
    "get": ("get_task", _first),
    "events_after": ("read_events", _first),
    "list_tasks": ("list_tasks", _no_task),
}
"""The store's methods watched: method name, then operation and how to find the task."""

BUS_CALLS: Mapping[str, tuple[str, TaskOf]] = {
    "publish": ("publish", _record_task),
    "request_cancel": ("request_cancel", _first),
}
"""The bus's methods watched, as `STORE_CALLS`."""


def watch_methods(
    target: Any,
    component: str,
    calls: Mapping[str, tuple[str, TaskOf]],
    watchers: Sequence[CallWatcher],
) -> None:
    """Replace `target`'s methods named in `calls` (on the instance) with wrappers telling
    `watchers` (a list, read at each call) of each call."""
    system = str(getattr(target, "system", type(target).__name__))
    for name, (operation, task_of) in calls.items():
        method = getattr(target, name)
        describe = partial(_described, component, operation, system, task_of)
        if inspect.iscoroutinefunction(method):
            wrapped: Callable[..., Any] = _watched_coroutine(method, describe, watchers)
        else:
            wrapped = _watched_future(method, describe, watchers)
        setattr(target, name, wrapped)


def _described(
    component: str, operation: str, system: str, task_of: TaskOf, *args: Any, **kwargs: Any
) -> WatchedCall:
    return WatchedCall(component, operation, system, task_of(*args, **kwargs))


def _watched_coroutine(
    method: Callable[..., Awaitable[Any]],
    describe: Callable[..., WatchedCall],
    watchers: Sequence[CallWatcher],
) -> Callable[..., Awaitable[Any]]:
    @wraps(method)
    async def watched(*args: Any, **kwargs: Any) -> Any:
        call = describe(*args, **kwargs)
        ends = [watcher.started(call) for watcher in watchers]
        try:
            result = await method(*args, **kwargs)
        except BaseException as exc:
            _end(ends, exc)
            raise
        _end(ends, None)
        return result

    return watched


def _watched_future(
    method: Callable[..., Future[Any]],
    describe: Callable[..., WatchedCall],
    watchers: Sequence[CallWatcher],
) -> Callable[..., Future[Any]]:
    @wraps(method)
    def watched(*args: Any, **kwargs: Any) -> Future[Any]:
        call = describe(*args, **kwargs)
        ends = [watcher.started(call) for watcher in watchers]
        try:
            future = method(*args, **kwargs)
        except BaseException as exc:
            _end(ends, exc)
            raise
        future.add_done_callback(partial(_future_done, ends))
        return future

    return watched


def _future_done(ends: list[CallEnd], future: Future[Any]) -> None:
    if future.cancelled():
        _end(ends, None)
    else:
        _end(ends, future.exception())


def _end(ends: list[CallEnd], error: BaseException | None) -> None:
    for end in ends:
        end(error)
