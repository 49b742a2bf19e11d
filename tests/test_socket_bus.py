"""The workers' bus: frames, the hub relaying them, losing the hub, and counting workers."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accord.cli.errors import BadArgument
from accord.cli.workers import worker_count
from accord.core.records import EventRecord
from accord.runtime import TaskRuntime
from accord.runtime.bus import StreamOverrun
from accord.runtime.bus_factory import open_bus
from accord.runtime.socket_bus import (
    MAX_FRAME_BYTES,
    SocketEventBus,
    decode_frame,
    encode_frame,
    read_frame,
    read_whole_frame,
)
from accord.runtime.socket_hub import Hub
from accord.store import InMemoryTaskStore
from accord.types import TaskState, TaskStatus, TaskStatusUpdateEvent
from agents_for_tests import SAFETY_TIMEOUT, GatedStreamer
from tcp_relay import UnixRelay
from test_redis_bus_outages import check_followed, started

entries = st.dictionaries(st.binary(min_size=1, max_size=1), st.binary(max_size=300))


@given(entries)
def test_a_frame_carries_any_entry(entry: dict[bytes, bytes]) -> None:
    frame = encode_frame(entry)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    assert decode_frame(frame[4:]) == entry


@given(entries)
async def test_the_hub_reads_a_frame_as_it_travels(entry: dict[bytes, bytes]) -> None:
    frame = encode_frame(entry)
    reader = asyncio.StreamReader()
    reader.feed_data(frame + frame)
    assert await read_whole_frame(reader) == frame
    assert decode_frame(await read_frame(reader)) == entry


@pytest.mark.parametrize("read", [read_frame, read_whole_frame])
async def test_a_frame_larger_than_any_entry_is_refused(
    read: Callable[[asyncio.StreamReader], Awaitable[bytes]],
) -> None:
    reader = asyncio.StreamReader()
    reader.feed_data((MAX_FRAME_BYTES + 1).to_bytes(4, "big"))
    with pytest.raises(ValueError, match="bus frame"):
        await read(reader)


def test_the_local_bus_url_names_the_hub_socket() -> None:
    bus = open_bus("local:///run/accord/bus.sock")
    assert isinstance(bus, SocketEventBus) and bus.path == "/run/accord/bus.sock"
    with pytest.raises(ValueError, match="names no socket"):
        open_bus("local://")


@pytest.mark.parametrize(("text", "count"), [("1", 1), ("4", 4), (" auto ", None)])
def test_workers_are_counted_or_one_per_core(text: str, count: int | None) -> None:
    assert worker_count(text) == (count or len(os.sched_getaffinity(0)))


@pytest.mark.parametrize("text", ["0", "-2", "two", ""])
def test_a_worker_count_below_one_is_refused(text: str) -> None:
    with pytest.raises(BadArgument, match="--workers"):
        worker_count(text)


def status(task_id: str, seq: int, state: TaskState) -> EventRecord:
    event = TaskStatusUpdateEvent(
        task_id=task_id, context_id="c", status=TaskStatus(state=state), final=False
    )
    return EventRecord.of(task_id, seq, event, final=False)


class HubProcess:
    """A hub serving at `path` in this event loop, which can be stopped and started again."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(Hub(self.path).serve())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[HubProcess]:
    served = HubProcess(str(tmp_path / "bus.sock"))
    served.start()
    yield served
    await served.stop()


async def test_records_reach_the_other_workers_not_the_sender_twice(hub: HubProcess) -> None:
    a, b, c = (SocketEventBus(hub.path) for _ in range(3))
    for bus in (a, b, c):
        await bus.start()
    try:
        on_a, on_b, on_c = (bus.subscribe("t1") for bus in (a, b, c))
        for seq in (1, 2, 3):
            await a.publish(status("t1", seq, TaskState.WORKING))
        async with asyncio.timeout(SAFETY_TIMEOUT):
            seen = {
                name: [(await anext(subscription)).seq for _ in range(3)]
                for name, subscription in (("a", on_a), ("b", on_b), ("c", on_c))
            }
        assert seen == {"a": [1, 2, 3], "b": [1, 2, 3], "c": [1, 2, 3]}
        await asyncio.sleep(0.1)  # room for an echo of a's own records, which must not come
        assert not on_a._pending
    finally:
        for bus in (a, b, c):
            await bus.close()


async def test_losing_the_hub_ends_streams_to_resume_and_the_bus_connects_again(
    hub: HubProcess,
) -> None:
    a, b = SocketEventBus(hub.path), SocketEventBus(hub.path)
    await a.start()
    await b.start()
    try:
        watching = b.subscribe("t1")
        await a.publish(status("t1", 1, TaskState.WORKING))
        async with asyncio.timeout(SAFETY_TIMEOUT):
            assert (await anext(watching)).seq == 1
            await hub.stop()
            with pytest.raises(StreamOverrun) as ended:
                await anext(watching)
        assert ended.value.data == {"lastEventId": 1}  # where a resubscribe picks up

        hub.start()
        again = b.subscribe("t1")
        async with asyncio.timeout(SAFETY_TIMEOUT):
            while True:  # until both links are back: entries sent before are lost, by design
                await a.publish(status("t1", 2, TaskState.WORKING))
                try:
                    async with asyncio.timeout(0.2):
                        assert (await anext(again)).seq == 2
                    break
                except TimeoutError:
                    continue
    finally:
        await a.close()
        await b.close()


async def test_a_worker_watching_lag_is_told_it_for_records_delivered_here(
    hub: HubProcess,
) -> None:
    a, b, c = (SocketEventBus(hub.path) for _ in range(3))
    lags: dict[str, list[float]] = {"a": [], "b": [], "c": []}
    for name, bus in (("a", a), ("b", b), ("c", c)):
        bus.lag_watchers.append(lags[name].append)
        await bus.start()
    try:
        on_a, on_b = a.subscribe("t1"), b.subscribe("t1")  # c has no subscriber of t1
        for seq in (1, 2):
            await a.publish(status("t1", seq, TaskState.WORKING))
        async with asyncio.timeout(SAFETY_TIMEOUT):
            assert [(await anext(on_b)).seq for _ in range(2)] == [1, 2]
            assert [(await anext(on_a)).seq for _ in range(2)] == [1, 2]
        assert len(lags["b"]) == 2 and all(0 <= lag < SAFETY_TIMEOUT for lag in lags["b"])
        assert lags["a"] == []  # its own records reach its subscribers at once
        assert lags["c"] == []
    finally:
        for bus in (a, b, c):
            await bus.close()


async def test_a_stream_on_another_worker_ends_with_the_task_though_its_worker_lost_the_hub(
    hub: HubProcess, tmp_path: Path
) -> None:
    """A worker cut off from the hub drops what it publishes meanwhile (the task's end here);
    a stream of the task on another worker reads it from the task's log once the task has
    been silent for `log_check_after`."""
    agent = GatedStreamer(chunks=1)
    store = InMemoryTaskStore()
    with UnixRelay(hub.path, str(tmp_path / "relay.sock")) as relay:
        follower_bus = SocketEventBus(hub.path)
        follower_bus.log_check_after = 0.2
        runner = TaskRuntime(agent, store, SocketEventBus(relay.path))
        follower = TaskRuntime(GatedStreamer(), store, follower_bus)
        try:
            for runtime in (runner, follower):
                await runtime.open()
            task_id = await started(runner, agent)
            watcher = follower.watch(task_id)
            seen = [await anext(watcher)]
            relay.cut()  # the chunk and the end are saved, and never reach the hub
            agent.release_all()
            async with asyncio.timeout(SAFETY_TIMEOUT):
                seen += [record async for record in watcher]
            await check_followed(follower, task_id, seen)
        finally:
            await runner.close()
            await follower.close()
