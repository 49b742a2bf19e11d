"""accord's gateway with processes that stop: an upstream killed in the middle of a stream,
and the gateway itself restarted while a caller follows a task (resubscribing with replay)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import accord
from accord import Client
from accord.types import (
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
    new_id,
)
from agents_for_tests import SAFETY_TIMEOUT
from js_peer import js_server
from live_server import serve_app
from served_process import STARTUP_TIMEOUT, TESTS_DIR, accord_serve, free_port

pytestmark = pytest.mark.processes


@contextmanager
def official_upstream(binding: str, version: str) -> Iterator[subprocess.Popen[str]]:
    """tests/official_upstream.py on BINDING and VERSION only; its URL as `process.args[-1]`
    is not known: read it with `upstream_url`."""
    process = subprocess.Popen(
        [sys.executable, str(TESTS_DIR / "official_upstream.py"), binding, version],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=SAFETY_TIMEOUT)


def upstream_url(process: subprocess.Popen[str]) -> str:
    """The URL the upstream prints once it serves."""
    watchdog = threading.Timer(STARTUP_TIMEOUT, process.kill)
    watchdog.start()
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
    finally:
        watchdog.cancel()
    assert line.startswith("http://"), f"the upstream did not start: {line!r}"
    return line


def hold(release: Path) -> Message:
    """A message the upstream works on until the file `release` exists."""
    return Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text=f"hold {release}")])


async def test_an_upstream_killed_mid_stream_fails_the_callers_task(tmp_path: Path) -> None:
    with official_upstream("JSONRPC", "0.3") as upstream:
        agent = accord.gateway(upstream_url(upstream))
        with serve_app(agent.app()) as url:
            client = Client(url, transport="HTTP+JSON", version="1.0")
            async with client, client.stream(hold(tmp_path / "never")) as stream:
                task = await anext(stream)
                working = await anext(stream)
                upstream.kill()
                rest = [event async for event in stream]
                stored = await client.get_task(task.id)
    assert isinstance(working, TaskStatusUpdateEvent)
    assert working.status.state is TaskState.WORKING
    [end] = rest
    assert isinstance(end, TaskStatusUpdateEvent) and end.status.state is TaskState.FAILED
    assert stored.status.state is TaskState.FAILED
    assert stored.status.message is not None
    assert "stopped answering while the task was working" in stored.status.message.text
    assert not stored.artifacts


async def test_callers_resubscribe_after_the_gateway_restarts(tmp_path: Path) -> None:
    """A task of a 0.3 JSON-RPC upstream, streamed through the gateway by a 1.0 HTTP+JSON
    caller; the gateway restarts on its SQLite file and follows the upstream's task again: a
    1.0 gRPC caller resubscribes (the task, then its changes) and the first caller resumes its
    stream from the last event id it saw (exactly the events it missed)."""
    release = tmp_path / "release"
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    with official_upstream("JSONRPC", "0.3") as upstream:
        options = [upstream_url(upstream), "--store", store, "--runner-ttl", "3s"]
        with accord_serve(*options, "--grpc-port", str(free_port()), command="gateway") as gw:
            client = Client(gw.url, transport="HTTP+JSON", version="1.0")
            async with client, client.stream(hold(release)) as stream:
                task = await anext(stream)
                working = await anext(stream)
                seen = stream.last_event_id
        assert isinstance(task, Task) and isinstance(working, TaskStatusUpdateEvent)
        assert seen is not None
        with accord_serve(*options, "--grpc-port", str(free_port()), command="gateway") as gw:
            grpc_client = Client(gw.url, transport="GRPC", version="1.0")
            async with grpc_client, grpc_client.resubscribe(task.id) as followed:
                now = await anext(followed)
                release.touch()
                followed_rest = [event async for event in followed]
            client = Client(gw.url, transport="HTTP+JSON", version="1.0")
            async with client, client.resubscribe(task.id, last_event_id=seen) as resumed:
                missed = [event async for event in resumed]
                stored = await client.get_task(task.id)
    assert isinstance(now, Task) and now.id == task.id
    assert not now.status.state.is_terminal
    for events in (followed_rest, missed):
        ends = [e for e in events if isinstance(e, TaskStatusUpdateEvent | Task)]
        assert ends[-1].status.state is TaskState.COMPLETED, events
    assert not any(isinstance(e, Task) and e.status.state is TaskState.SUBMITTED for e in missed)
    assert stored.status.state is TaskState.COMPLETED
    assert [a.text for a in stored.artifacts or ()] == [f"hold {release}"]
    assert (stored.id, stored.context_id) == (task.id, task.context_id)


async def test_the_js_sdk_server_behind_the_gateway() -> None:
    """The official JS SDK's server as the upstream; accord's 1.0 gRPC and 0.3 HTTP+JSON
    clients through the gateway, a task that asks for input answered through it too."""
    async with js_server() as js_url:
        agent = accord.gateway(js_url)
        with serve_app(agent.app(config=accord.ServerConfig(grpc_port=0))) as url:
            for transport, version in (("GRPC", "1.0"), ("HTTP+JSON", "0.3")):
                async with Client(url, transport=transport, version=version) as client:
                    task = await client.send("hello")
                    events = [event async for event in client.stream("hello")]
                    asked = await client.send("ask me")
                assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
                assert [a.text for a in task.artifacts or ()] == ["hello"]
                assert [type(e) for e in events] == [
                    Task,
                    TaskStatusUpdateEvent,
                    TaskArtifactUpdateEvent,
                    TaskStatusUpdateEvent,
                ]
                assert isinstance(asked, Task)
                assert asked.status.state is TaskState.INPUT_REQUIRED
            async with Client(js_url) as direct:
                theirs = await direct.get_task(asked.id)
    assert theirs.status.state is TaskState.INPUT_REQUIRED
    assert theirs.context_id == asked.context_id
