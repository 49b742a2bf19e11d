"""Slow and heavy clients against a real uvicorn on loopback, over raw sockets: slow headers
and bodies time out, oversized headers and too many connections are refused, a stream nobody
reads ends (resumable) instead of growing, large bodies beyond the budget get 503."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

import accord
from accord import create_app
from accord.core.records import EventRecord
from accord.runtime import bus, follow
from accord.runtime.redis_bus import RedisEventBus
from accord.samples import echo
from accord.server.http_limits import HttpLimits
from accord.store import InMemoryTaskStore
from accord.types import new_id
from agents_for_tests import SAFETY_TIMEOUT
from rpc import request, send_params
from served_process import SERVING_COMMANDS, accord_serve
from services import redis_url


@contextmanager
def limited_server(app: Any, limits: HttpLimits) -> Iterator[tuple[str, int]]:
    """`app` on uvicorn with `limits`, on a free loopback port; yields (host, port)."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", **limits.uvicorn_options()
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield "127.0.0.1", port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _connect(address: tuple[str, int]) -> socket.socket:
    return socket.create_connection(address, timeout=SAFETY_TIMEOUT)


def _read_all(connection: socket.socket) -> bytes:
    """Everything until the server closes the connection."""
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    return received


def _post(body: bytes, extra: str = "") -> bytes:
    head = (
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode() + body


BODY = json.dumps(request("message/send", send_params("hi"))).encode()
QUICK = HttpLimits(header_timeout=0.5, body_timeout=1.0, max_connections=20)


@pytest.fixture(scope="module")
def address() -> Iterator[tuple[str, int]]:
    with limited_server(create_app(echo.agent), QUICK) as served:
        yield served


def test_headers_sent_a_byte_at_a_time_time_out(address: tuple[str, int]) -> None:
    with _connect(address) as connection:
        started = time.monotonic()
        request_bytes = _post(BODY)
        try:
            for byte in request_bytes[:40]:
                connection.sendall(bytes([byte]))
                time.sleep(0.05)
        except OSError:
            pass  # closed by the server while sending: what the test wants
        answer = _read_all(connection)
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert time.monotonic() - started < 3


def test_a_silent_connection_is_closed(address: tuple[str, int]) -> None:
    with _connect(address) as connection:
        answer = _read_all(connection)
    assert answer.startswith(b"HTTP/1.1 408 ")


def test_a_body_trickling_in_times_out(address: tuple[str, int]) -> None:
    with _connect(address) as connection:
        started = time.monotonic()
        message = _post(BODY)
        head, body = message[: message.index(b"\r\n\r\n") + 4], message[len(message) - len(BODY) :]
        connection.sendall(head)
        try:
            for byte in body[:10]:
                connection.sendall(bytes([byte]))
                time.sleep(0.3)
        except OSError:
            pass
        answer = _read_all(connection)
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert time.monotonic() - started < 5


def test_requests_on_a_kept_alive_connection_keep_working(address: tuple[str, int]) -> None:
    with httpx.Client(base_url=f"http://{address[0]}:{address[1]}") as http:
        for _ in range(3):
            answer = http.post("/", content=BODY, headers={"Content-Type": "application/json"})
            assert answer.status_code == 200
            time.sleep(0.3)  # idle, under the keep-alive timeout, past none of the deadlines
    with _connect(address) as connection:  # two requests in one write (pipelined)
        connection.sendall(_post(BODY) + _post(BODY, "Connection: close\r\n"))
        answers = _read_all(connection)
    assert answers.count(b"HTTP/1.1 200 ") == 2, answers


def _read_response(connection: socket.socket) -> bytes:
    """One response with a Content-Length, read off a connection that stays open."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += connection.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += connection.recv(65536)
    return head


def test_the_next_request_on_a_kept_alive_connection_gets_its_own_header_deadline(
    address: tuple[str, int],
) -> None:
    with _connect(address) as connection:
        connection.sendall(_post(BODY))
        assert _read_response(connection).startswith(b"HTTP/1.1 200 ")
        time.sleep(0.2)  # the first request's deadlines are still ahead, and later
        connection.sendall(_post(BODY)[:20])
        started = time.monotonic()
        answer = _read_all(connection)
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert time.monotonic() - started < QUICK.header_timeout + 0.4


def test_a_body_deadline_shorter_than_the_header_deadline_holds() -> None:
    limits = HttpLimits(header_timeout=5.0, body_timeout=0.3)
    with limited_server(create_app(echo.agent), limits) as served, _connect(served) as connection:
        message = _post(BODY)
        connection.sendall(message[: len(message) - len(BODY)] + BODY[:5])
        started = time.monotonic()
        answer = _read_all(connection)
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert time.monotonic() - started < 2.0  # the body's 0.3 s, not what was left of 5 s


def test_a_normal_request_keeps_working(address: tuple[str, int]) -> None:
    with _connect(address) as connection:
        connection.sendall(_post(BODY, "Connection: close\r\n"))
        answer = _read_all(connection)
    assert answer.startswith(b"HTTP/1.1 200 "), answer
    assert b'"completed"' in answer


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        ("X-Big: " + "a" * 200_000 + "\r\n", b"431"),
        ("".join(f"X-H{i}: v\r\n" for i in range(5000)), b"431"),
    ],
    ids=["200 KB header", "5000 headers"],
)
def test_oversized_headers_are_refused(address: tuple[str, int], extra: str, status: bytes) -> None:
    with _connect(address) as connection:
        with suppress(OSError):
            connection.sendall(_post(BODY, extra))
        answer = _read_all(connection)
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]


def test_a_long_url_is_refused(address: tuple[str, int]) -> None:
    with _connect(address) as connection:
        with suppress(OSError):
            connection.sendall(b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: t\r\n\r\n")
        answer = _read_all(connection)
    assert answer.startswith(b"HTTP/1.1 414 "), answer[:200]


_UPGRADE = "Upgrade: websocket\r\nConnection: Upgrade\r\n"
_HANDSHAKE = (
    _UPGRADE + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)


def _get(path: str, host: str, extra: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode()


@pytest.mark.parametrize(
    ("asked", "status"),
    [
        (_post(BODY, _UPGRADE), b"200"),
        (_get("/.well-known/agent-card.json", "localhost", _HANDSHAKE), b"200"),
        (_get("/", "elsewhere.example", _HANDSHAKE), b"400"),
        (f"POST /x\r\nHost: localhost\r\n{_UPGRADE}\r\n".encode(), b"4"),
    ],
    ids=["a send asking to upgrade", "a WebSocket handshake", "to a Host refused", "no version"],
)
def test_a_request_asking_to_upgrade_is_answered_and_its_connection_closes(
    address: tuple[str, int], asked: bytes, status: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    """A2A has no WebSocket binding: the request is answered as plain HTTP (uvicorn's
    handshake would have waited forever on a POST), bytes sent after it change nothing, and
    the connection ends after the answer, with no error logged. It ends lingering: bytes the
    client still sends are drained, so they cannot reset the connection and lose the answer."""
    caplog.set_level(logging.WARNING)
    with _connect(address) as connection:
        connection.sendall(asked)
        connection.sendall(b"more bytes, after the request")
        answer = _read_all(connection)
        for _ in range(2):  # a closed socket would answer the first with a reset
            connection.sendall(b"bytes sent after the answer")
            time.sleep(0.05)
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:300]
    assert b"connection: close" in answer.lower()
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert "WebSocket" not in caplog.text


def test_connections_past_the_limit_are_refused_with_retry_after(
    address: tuple[str, int],
) -> None:
    held = [_connect(address) for _ in range(QUICK.max_connections)]
    try:
        time.sleep(0.1)
        with _connect(address) as extra:
            answer = _read_all(extra)
        assert answer.startswith(b"HTTP/1.1 503 "), answer
        assert b"retry-after: 1" in answer.lower()
    finally:
        for connection in held:
            connection.close()
    time.sleep(0.1)
    with _connect(address) as connection:  # room again once they are gone
        connection.sendall(_post(BODY, "Connection: close\r\n"))
        assert _read_all(connection).startswith(b"HTTP/1.1 200 ")


@pytest.mark.processes
def test_accord_serve_applies_the_limits() -> None:
    with accord_serve(
        "accord.samples.echo:agent", "--store", "memory", "--header-timeout", "1s"
    ) as served:
        address = httpx.URL(served.url)
        host_port = (address.host, address.port or 80)
        for extra in (
            "X-Big: " + "a" * 200_000 + "\r\n",
            "".join(f"X{i}: v\r\n" for i in range(5000)),
        ):
            with _connect(host_port) as connection:
                with suppress(OSError):
                    connection.sendall(_post(BODY, extra))
                assert _read_all(connection).startswith(b"HTTP/1.1 431 ")
        with _connect(host_port) as connection:
            connection.sendall(b"POST / HT")
            assert _read_all(connection).startswith(b"HTTP/1.1 408 ")


@pytest.mark.processes
@SERVING_COMMANDS
def test_every_server_command_closes_a_connection_asking_to_upgrade(
    tmp_path: Path, command: str, args: tuple[str, ...], ready_path: str
) -> None:
    """What `accord serve` does with a request asking to upgrade, every command serving
    HTTP does: answer it and close (the limits apply to each)."""
    with accord_serve(*args, cwd=tmp_path, command=command, ready_path=ready_path) as served:
        address = httpx.URL(served.url)
        with _connect((address.host, address.port or 80)) as connection:
            connection.sendall(_post(b"{}", _UPGRADE))
            assert _read_all(connection).startswith(b"HTTP/1.1 ")


# --- a reader that never reads ---------------------------------------------------------------

CHUNKS = 1500
CHUNK = "x" * 8192


@accord.agent(name="Flood", description="Streams many large chunks as fast as it can.")
async def flood(context: accord.RequestContext) -> AsyncIterator[str]:
    for _ in range(CHUNKS):
        yield CHUNK


async def test_a_stream_nobody_reads_drops_what_waits_and_catches_up_from_the_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bus, "MAX_PENDING_RECORDS", 100)
    pages: list[int | None] = []
    read_log = InMemoryTaskStore.events_after

    async def events_after(
        store: InMemoryTaskStore, task_id: str, seq: int, limit: int | None = None
    ) -> list[EventRecord]:
        pages.append(limit)
        return await read_log(store, task_id, seq, limit)

    monkeypatch.setattr(InMemoryTaskStore, "events_after", events_after)
    app = create_app(flood)
    with limited_server(app, HttpLimits()) as address:
        reader, writer = await asyncio.open_connection(*address)
        body = json.dumps(request("message/stream", send_params("go"))).encode()
        writer.write(_post(body, "Connection: close\r\n"))
        await writer.drain()
        async with httpx.AsyncClient(base_url=f"http://{address[0]}:{address[1]}") as http:
            await _wait_until_done(http)
            raw = await asyncio.wait_for(reader.read(), SAFETY_TIMEOUT)  # only now: read
            writer.close()
    events = _sse_events(raw)
    # What waited for the reader was dropped (at most 100 records), not kept: the stream
    # read the rest from the task's log, a page at a time, and lost nothing.
    assert pages and set(pages) == {follow.CATCH_UP}
    seqs = [seq for seq, _ in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), "in order, none twice"
    kinds = [event["result"].get("kind") for _, event in events]
    assert kinds.count("artifact-update") == CHUNKS
    assert events[-1][1]["result"]["status"]["state"] == "completed"


async def _wait_until_done(http: httpx.AsyncClient) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        listed = await http.get("/tasks")
        tasks = listed.json()["tasks"]
        if tasks and tasks[0]["status"]["state"] == "TASK_STATE_COMPLETED":
            task_id: str = tasks[0]["id"]
            return task_id
        await asyncio.sleep(0.1)
    raise AssertionError("the agent did not finish")


def _sse_events(raw: bytes) -> list[tuple[int | None, dict[str, Any]]]:
    text = raw.split(b"\r\n\r\n", 1)[1] if raw.startswith(b"HTTP/") else raw
    events: list[tuple[int | None, dict[str, Any]]] = []
    for block in text.decode().split("\n\n"):
        event_id, data = None, None
        for line in block.splitlines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if data is not None:
            events.append((event_id, data))
    return events


# --- large bodies share a budget -------------------------------------------------------------


def _big_body(size: int) -> bytes:
    body = json.dumps(request("message/send", send_params(""))).encode()
    return body.replace(b'"text": ""', b'"text": "' + b"x" * (size - len(body)) + b'"')


@pytest.mark.parametrize("path", ["/", "/v1/message:send"])
def test_a_large_body_past_the_budget_waits_then_gets_503(path: str) -> None:
    app = create_app(echo.agent, max_body_bytes=1_000_000, max_body_memory=1_000_000)
    app.state.body_budget.wait = 0.5
    big = _big_body(900_000)
    with limited_server(app, HttpLimits()) as address, _connect(address) as holder:
        holder.sendall(_post(big)[:-1000])  # its body is not all there: its room is held
        time.sleep(0.2)
        with httpx.Client(base_url=f"http://{address[0]}:{address[1]}") as http:
            refused = http.post(path, content=big, headers={"Content-Type": "application/json"})
            assert refused.status_code == 503, refused.text
            assert refused.headers["retry-after"] == "1"
            assert "busy" in refused.text
            small = http.post("/", json=request("message/send", send_params("hi")))
            assert small.status_code == 200  # small bodies are not held back
            holder.sendall(_post(big)[-1000:])
            assert _read_all_response(holder).startswith(b"HTTP/1.1 200 ")
            again = http.post("/", content=big, headers={"Content-Type": "application/json"})
            assert again.status_code == 200


def _read_all_response(connection: socket.socket) -> bytes:
    received = b""
    while b"\r\n\r\n" not in received:
        received += connection.recv(65536)
    return received


def test_a_large_answer_arrives_whole_in_its_envelope() -> None:
    body = _big_body(3_000_000)
    with limited_server(create_app(echo.agent), HttpLimits()) as (host, port):
        url = f"http://{host}:{port}/"
        answer = httpx.post(url, content=body, headers={"Content-Type": "application/json"})
    assert int(answer.headers["content-length"]) == len(answer.content)
    task = answer.json()["result"]
    assert len(task["artifacts"][0]["parts"][0]["text"]) > 2_900_000


# --- each bus bounds what waits for one subscriber -------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_subscriber_that_never_reads_is_ended_not_grown(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bus, "MAX_PENDING_RECORDS", 50)
    events: bus.EventBus
    if kind == "redis":
        events = RedisEventBus(await redis_url(), stream=f"accord:test:{new_id()}")
    else:
        events = bus.InProcessEventBus()
    await events.start()
    try:
        with events.subscribe("t-1") as slow:
            first = EventRecord("t-1", 1, None, False, b"{}")
            await events.publish(first)
            assert await asyncio.wait_for(anext(slow), SAFETY_TIMEOUT) == first
            for seq in range(2, 500):
                await events.publish(EventRecord("t-1", seq, None, False, b"{}"))
            await asyncio.sleep(0.5 if kind == "redis" else 0)
            assert len(slow._pending) <= 51
            with pytest.raises(bus.StreamOverrun) as ended:
                await asyncio.wait_for(anext(slow), SAFETY_TIMEOUT)
            assert ended.value.data == {"lastEventId": 1}
    finally:
        await events.close()
