"""`accord serve --workers N`: processes sharing a port, a SQLite store and a bus hub."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from accord import Client, SyncClient
from accord.types import Message, Task, TaskState
from agents_for_tests import SAFETY_TIMEOUT, until
from rpc import RpcClient, SseStream, connect, send_params
from served_process import STARTUP_TIMEOUT, ServedProcess, accord_command, accord_serve, free_port
from ticker_streams import (
    FAST,
    RESTARTABLE_TICKER,
    TICKER,
    artifact_ticks,
    counted,
    final_status,
    full_log,
    is_tick,
    numbered,
    resume,
    through,
    ticks,
)

pytestmark = pytest.mark.processes


def children_of(served: ServedProcess) -> list[int]:
    pid = served.process.pid
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def workers_of(served: ServedProcess) -> list[int]:
    """The pids of the server's workers: its children holding the port's listening socket
    (the bus hub, its other child, does not)."""
    port = port_of(served)
    listening = _tcp_inodes_matching(lambda local, remote: (local, remote) == (port, 0))
    return [child for child in children_of(served) if _socket_inodes(child) & listening]


def port_of(served: ServedProcess) -> int:
    return int(served.url.rsplit(":", 1)[1])


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def _tcp_inodes_matching(wanted: Callable[[int, int], bool]) -> set[str]:
    """The inodes of this machine's TCP sockets whose (local port, remote port) is `wanted`."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if wanted(int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16)):
                inodes.add(inode)
    return inodes


def worker_serving(served: ServedProcess, response: httpx.Response) -> int:
    """The pid of the worker holding the server's end of `response`'s connection."""
    stream = response.extensions["network_stream"]
    client_port = stream.get_extra_info("client_addr")[1]
    server_port = port_of(served)
    inodes = _tcp_inodes_matching(
        lambda local, remote: (local, remote) == (server_port, client_port)
    )
    for pid in workers_of(served):
        if _socket_inodes(pid) & inodes:
            return pid
    raise AssertionError(f"no worker holds the connection from port {client_port}")


@asynccontextmanager
async def on_worker(
    served: ServedProcess, opens: Callable[[RpcClient], Awaitable[httpx.Response]], *, avoid: int
) -> AsyncIterator[tuple[RpcClient, int]]:
    """A client whose connection reached a worker other than `avoid`: new connections until one
    does (the kernel hands each to whichever worker accepts first)."""
    for _ in range(50):
        async with connect(served.url) as rpc:
            pid = worker_serving(served, await opens(rpc))
            if pid != avoid:
                yield rpc, pid
                return
    pytest.fail(f"50 connections all reached worker {avoid}")


async def card(rpc: RpcClient) -> httpx.Response:
    return await rpc.http.get("/.well-known/agent-card.json")


def sqlite_store(tmp_path: Path) -> tuple[str, str]:
    return ("--store", f"sqlite:///{tmp_path}/accord.db")


def serve_workers(target: str, tmp_path: Path, *options: str) -> object:
    return accord_serve(target, "--workers", "2", *sqlite_store(tmp_path), *FAST, *options)


def stream_worker(served: ServedProcess, stream: SseStream) -> int:
    return worker_serving(served, stream.response)


async def test_a_stream_started_on_one_worker_resumes_on_another(tmp_path: Path) -> None:
    with serve_workers(TICKER, tmp_path) as served:
        assert len(workers_of(served)) == 2
        async with (
            connect(served.url) as first_client,
            first_client.stream("message/stream", send_params("30")) as from_a,
        ):
            first = [await from_a.next() for _ in range(4)]  # the task, working, 2 ticks
            runner = stream_worker(served, from_a)
            task_id = first[0].result["id"]
            async with on_worker(served, card, avoid=runner) as (other, _):
                async with resume(other, task_id, after=first[-1].id) as from_b:
                    assert stream_worker(served, from_b) != runner
                    rest_a, rest_b = await asyncio.gather(from_a.rest(), from_b.rest())
                logged = await full_log(other, task_id)

    assert numbered(rest_b) == numbered(rest_a)  # the same events, numbered alike
    assert numbered(first + rest_a) == numbered(logged)
    assert final_status(rest_b)["state"] == "completed"
    assert ticks(first + rest_b) == counted(30)


async def test_cancel_sent_to_one_worker_stops_the_task_on_another(tmp_path: Path) -> None:
    with serve_workers(TICKER, tmp_path) as served:
        async with (
            connect(served.url) as first_client,
            first_client.stream("message/stream", send_params("1000")) as from_a,
        ):
            first = await through(from_a, is_tick)
            runner = stream_worker(served, from_a)
            task_id = first[0].result["id"]
            async with on_worker(served, card, avoid=runner) as (other, _):
                canceled = await other.result("tasks/cancel", {"id": task_id})
                rest = await from_a.rest()
                logged = await full_log(other, task_id)
                task = await other.get_task(task_id)

    assert canceled["status"]["state"] == "canceled"
    assert final_status(rest)["state"] == "canceled"
    assert numbered(first + rest) == numbered(logged)
    assert artifact_ticks(task) == ticks(first + rest)
    assert "no replica canceled" not in served.output  # the runner canceled it, not a bystander
    assert "Traceback" not in served.output


async def test_a_killed_worker_is_started_again_and_loses_no_acknowledged_task(
    tmp_path: Path,
) -> None:
    with serve_workers(RESTARTABLE_TICKER, tmp_path) as served:
        async with connect(served.url) as rpc:
            response = await rpc.post(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "message/send",
                    "params": send_params("10", configuration={"blocking": False}),
                }
            )
            victim = worker_serving(served, response)
            acknowledged = response.json()["result"]
            done = [await rpc.send("2") for _ in range(3)]
        os.kill(victim, signal.SIGKILL)

        async with on_worker(served, card, avoid=victim) as (survivor, _):
            async with resume(survivor, acknowledged["id"], after=0) as follower:
                events = await follower.rest()
            found = [await survivor.get_task(task["id"]) for task in done]
            task = await survivor.get_task(acknowledged["id"])
        await until(lambda: len(workers_of(served)) == 2, "the worker started again")
        again = workers_of(served)

    assert victim not in again, served.output
    assert re.search(rf"worker \d \(pid {victim}\) ended .*starting another", served.output)
    assert final_status(events)["state"] == "completed"  # run again by a surviving worker
    assert task["status"]["state"] == "completed" and artifact_ticks(task) == counted(10)
    assert found == done


def test_sigterm_stops_every_worker_and_the_hub(tmp_path: Path) -> None:
    with serve_workers(TICKER, tmp_path) as served:
        children = children_of(served)
        assert len(children) == 3 and len(workers_of(served)) == 2  # two workers, their hub
        exit_code = served.stop(signal.SIGTERM)

    assert exit_code == 0, served.output
    assert not [child for child in children if os.path.exists(f"/proc/{child}")]
    assert served.output.count("Application shutdown complete") == 2
    assert "Traceback" not in served.output


async def test_every_worker_serves_grpc_on_the_one_grpc_port(tmp_path: Path) -> None:
    with serve_workers(TICKER, tmp_path, "--grpc-port", str(free_port())) as served:
        await until(lambda: served.output.count("Application startup complete") == 2)
        async with Client(served.url, transport="GRPC") as client:
            tasks = [await client.send("2") for _ in range(6)]
            interface = client.interface

    assert interface is not None and interface.transport == "GRPC"
    assert [task.status.state for task in tasks if isinstance(task, Task)] == [
        TaskState.COMPLETED
    ] * 6
    assert "Traceback" not in served.output


def test_workers_need_a_store_they_share(tmp_path: Path) -> None:
    finished = subprocess.run(
        accord_command("serve", TICKER, "--workers", "2", "--store", "memory"),
        capture_output=True,
        text=True,
        timeout=STARTUP_TIMEOUT,
        cwd=tmp_path,
    )
    assert finished.returncode == 2
    assert "--workers 2 needs a store the workers share" in finished.stderr
    assert "Traceback" not in finished.stderr


def test_an_agent_made_in_a_script_serves_on_workers(tmp_path: Path) -> None:
    """The workers are forked from the script's process: its agent needs no import path."""
    port = free_port()
    script = (
        "import accord\n"
        "@accord.agent(name='Shouter')\n"
        "async def shout(context: accord.RequestContext) -> str:\n"
        "    return context.text.upper()\n"
        f"shout.serve(port={port}, workers=2)\n"
    )
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-c", script], stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        _wait_for_card(url, process)
        with SyncClient(url) as client:
            replies = [client.send(f"hello {n}") for n in range(4)]
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=SAFETY_TIMEOUT)

    assert [reply.text for reply in replies if isinstance(reply, Message)] == [
        f"HELLO {n}" for n in range(4)
    ]
    assert "serving Shouter at" in stderr and "with 2 workers" in stderr
    assert process.returncode == 0 and "Traceback" not in stderr


def _wait_for_card(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            httpx.get(url + "/.well-known/agent-card.json").raise_for_status()
            return
        except httpx.TransportError:
            time.sleep(0.1)
    pytest.fail(f"the script did not serve (exit status {process.poll()})")
