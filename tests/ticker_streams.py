"""Reading the ticker sample's streams in tests: resuming, replaying, ticks and final states."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from rpc import Json, RpcClient, SseEvent, SseStream, text_of

TICKER = "accord.samples.ticker:agent"
RESTARTABLE_TICKER = "accord.samples.ticker:restartable_agent"
FAST = ("--runner-ttl", "2s", "--graceful-timeout", "5s")
"""A dead replica's tasks are taken over within seconds; SIGTERM waits at most 5 s."""


def resume(
    rpc: RpcClient, task_id: str, after: int | None = None
) -> AbstractAsyncContextManager[SseStream]:
    """`tasks/resubscribe`, with `Last-Event-ID: after` when given."""
    headers = {"Last-Event-ID": str(after)} if after is not None else None
    return rpc.stream("tasks/resubscribe", {"id": task_id}, headers=headers)


async def full_log(rpc: RpcClient, task_id: str) -> list[SseEvent]:
    """Every logged event of a finished task, replayed from the start (`Last-Event-ID: 0`)."""
    async with resume(rpc, task_id, after=0) as replay:
        return await replay.rest()


async def through(stream: SseStream, wanted: Callable[[Json], bool]) -> list[SseEvent]:
    """The events of `stream` up to and including the first whose result is `wanted`."""
    events = [await stream.next()]
    while not wanted(events[-1].result):
        events.append(await stream.next())
    return events


def is_tick(result: Json) -> bool:
    return result["kind"] == "artifact-update"


def ticks(events: list[SseEvent]) -> list[str]:
    """The ticks the artifact updates among `events` carry, in order."""
    return [text_of(event.result["artifact"]) for event in events if is_tick(event.result)]


def counted(count: int) -> list[str]:
    return [f"tick {n}\n" for n in range(1, count + 1)]


def artifact_ticks(task: Json) -> list[str]:
    """The ticks of a task's last artifact (the ticker appends one per tick)."""
    return [part["text"] for part in task["artifacts"][-1]["parts"]]


def final_status(events: list[SseEvent]) -> Json:
    """The status of the last event, which must be a final status update."""
    last = events[-1].result
    assert last["kind"] == "status-update" and last["final"], last
    status: Json = last["status"]
    return status


def numbered(events: list[SseEvent]) -> list[tuple[int | None, Json]]:
    return [(event.id, event.result) for event in events]
