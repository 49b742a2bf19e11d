"""CorkedTransport: the writes of one turn of the event loop leave as one, in order, nothing
held is lost when the connection ends, and nothing written after its end raises; against a real
uvicorn with accord's protocol, on both event loops, hostile requests leave no traceback."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from accord import create_app
from accord.samples import echo
from accord.server.corking import HELD_BYTES, CorkedTransport
from accord.server.http_limits import HttpLimits
from agents_for_tests import SAFETY_TIMEOUT
from live_server import serve_app
from rpc import request, send_params


class RecordingTransport(asyncio.Transport):
    """The socket's side: what was sent, in how many writes, and how it ended."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[bytes] = []
        self.ended: list[str] = []

    def write(self, data: Any) -> None:
        if self.ended:  # as asyncio's and uvloop's transports do
            raise RuntimeError("Cannot call write() after write_eof()")
        self.sent.append(bytes(data))

    def write_eof(self) -> None:
        self.ended.append("eof")

    def close(self) -> None:
        self.ended.append("close")

    def abort(self) -> None:
        self.ended.append("abort")

    def is_closing(self) -> bool:
        return "close" in self.ended or "abort" in self.ended  # not after write_eof alone

    def get_write_buffer_size(self) -> int:
        return 7


async def test_a_response_head_and_body_leave_in_one_write() -> None:
    socket = RecordingTransport()
    corked = CorkedTransport(socket, asyncio.get_running_loop())
    corked.write(b"HTTP/1.1 200 OK\r\n\r\n")
    corked.write(b'{"result": 1}')
    assert socket.sent == [] and corked.get_write_buffer_size() == 7 + 32
    await asyncio.sleep(0)
    assert socket.sent == [b'HTTP/1.1 200 OK\r\n\r\n{"result": 1}']
    corked.write(b"next")  # a later turn: a write of its own
    await asyncio.sleep(0)
    assert socket.sent[1:] == [b"next"]


async def test_a_large_write_leaves_at_once_after_what_was_held() -> None:
    socket = RecordingTransport()
    corked = CorkedTransport(socket, asyncio.get_running_loop())
    corked.write(b"head")
    corked.write(b"x" * HELD_BYTES)
    assert socket.sent == [b"head" + b"x" * HELD_BYTES]
    await asyncio.sleep(0)
    assert len(socket.sent) == 1


async def test_ending_the_connection_sends_what_is_held_first_and_abort_drops_it() -> None:
    loop = asyncio.get_running_loop()
    for end, sent, ended in (
        ("close", [b"bye"], ["close"]),
        ("write_eof", [b"bye"], ["eof"]),
        ("abort", [], ["abort"]),
    ):
        socket = RecordingTransport()
        corked = CorkedTransport(socket, loop)
        corked.write(b"bye")
        getattr(corked, end)()
        await asyncio.sleep(0)
        assert (socket.sent, socket.ended) == (sent, ended)


async def test_what_is_held_when_the_transport_closes_underneath_is_dropped() -> None:
    socket = RecordingTransport()
    corked = CorkedTransport(socket, asyncio.get_running_loop())
    corked.write(b"late")
    socket.close()  # the peer went away (connection lost)
    await asyncio.sleep(0)
    assert socket.sent == []
    assert corked.get_extra_info("peername") is None  # the rest is the transport's


async def test_writes_after_the_end_of_the_connection_are_dropped_quietly() -> None:
    loop = asyncio.get_running_loop()
    raised: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: raised.append(context))
    for end in ("write_eof", "close", "abort"):
        socket = RecordingTransport()
        corked = CorkedTransport(socket, loop)
        corked.write(b"refused")
        getattr(corked, end)()
        corked.write(b"a pipelined answer, too late")  # must not reach, nor raise in, flush
        corked.writelines([b"more"])
        await asyncio.sleep(0)
        assert socket.sent == ([] if end == "abort" else [b"refused"])
        assert corked.get_write_buffer_size() == 7
    assert raised == []


# --- a real server -----------------------------------------------------------------------------

_BODY = json.dumps(request("message/send", send_params("hi"))).encode()
_VALID = (
    b"POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\n\r\n" % len(_BODY) + _BODY
)
_INVALID = {
    "huge header": b"GET / HTTP/1.1\r\nHost: test\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n",
    "too many headers": b"GET / HTTP/1.1\r\nHost: test\r\n"
    + b"".join(b"X-%d: 1\r\n" % n for n in range(200))
    + b"\r\n",
    "long URL": b"GET /" + b"u" * 70_000 + b" HTTP/1.1\r\nHost: test\r\n\r\n",
    "garbage": b"NOT HTTP AT ALL\r\n\r\n",
    "bad chunking": b"POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n",
    "two lengths": b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 1\r\n"
    b"Content-Length: 2\r\n\r\nab",
}


class _Answers:
    """An ASGI app counting the responses it finished writing, for a client to wait on
    before it closes the connection."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.count = 0
        self._changed = threading.Condition()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def counting_send(message: Any) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                await asyncio.sleep(0)  # the transport's held writes go out (or not) first
                with self._changed:
                    self.count += 1
                    self._changed.notify_all()

        await self.app(scope, receive, send if scope["type"] != "http" else counting_send)

    def wait_for(self, count: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: self.count >= count, SAFETY_TIMEOUT)


def _exchange(address: tuple[str, int], data: bytes, answers: _Answers, valid: int) -> bytes:
    """Send `data` on a new connection and read until the server ends it, keeping the
    connection open until the app has written its answers to the `valid` requests in it."""
    expected = answers.count + valid
    received = b""
    with socket.create_connection(address, timeout=SAFETY_TIMEOUT) as connection:
        try:
            connection.sendall(data)
            while chunk := connection.recv(65536):
                received += chunk
        except ConnectionError:
            pass  # the server reset a connection it refused: an answer too
        answers.wait_for(expected)
    return received


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_invalid_requests_uvicorn_answers_itself_leave_no_traceback(
    loop: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Each invalid request alone, and after a valid one on the same connection (whose answer
    the app writes once the refusal has ended the connection): every one is answered, and the
    server logs no error."""
    caplog.set_level(logging.WARNING)
    answers = _Answers(create_app(echo.agent))
    with serve_app(answers, loop=loop, **HttpLimits().uvicorn_options()) as url:
        parts = urlsplit(url)
        address = (parts.hostname or "", parts.port or 0)
        for name, invalid in _INVALID.items():
            for valid in (0, 1):
                answer = _exchange(address, _VALID * valid + invalid, answers, valid)
                assert answer.startswith(b"HTTP/1.1 "), (name, answer[:200])
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [record.getMessage() for record in errors]
    assert "Traceback" not in caplog.text


_POST_UPGRADE = (
    b"POST / HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Content-Length: 2\r\n\r\n{}"
)
_PIECES = [
    _VALID,
    *_INVALID.values(),
    b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: test\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: -1\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 99\r\n\r\n{}",
    b"POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffff\r\n",
    b"POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
    b"Content-Length: 9\r\n\r\n{not json",
    b"GET / HTTP/1.1\r\nHost: te\x00st\r\n\r\n",
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    b"GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
    _POST_UPGRADE,
]
_EXAMPLES = int(os.environ.get("ACCORD_FUZZ_EXAMPLES", "60"))


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_malformed_requests_in_any_order_leave_no_traceback(
    loop: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Valid, invalid and cut-off requests pipelined on one connection in any order, the
    client ending its side or not: the server logs no error (ACCORD_FUZZ_EXAMPLES sets how
    many connections)."""
    caplog.set_level(logging.WARNING)
    limits = HttpLimits(header_timeout=0.5, body_timeout=0.5, keep_alive_timeout=0.5)
    with serve_app(create_app(echo.agent), loop=loop, **limits.uvicorn_options()) as url:
        parts = urlsplit(url)
        address = (parts.hostname or "", parts.port or 0)
        pieces = st.one_of(
            st.sampled_from(_PIECES),
            st.tuples(st.sampled_from(_PIECES), st.integers(1, 200)).map(lambda p: p[0][: p[1]]),
            st.binary(max_size=64),
        )

        @settings(max_examples=_EXAMPLES, deadline=None, database=None)
        @given(st.lists(pieces, min_size=1, max_size=4), st.booleans())
        @example(sent=[_POST_UPGRADE], half_close=False)  # once held open forever
        def exchange(sent: list[bytes], half_close: bool) -> None:
            with socket.create_connection(address, timeout=SAFETY_TIMEOUT) as connection:
                try:
                    connection.sendall(b"".join(sent))
                    if half_close:
                        connection.shutdown(socket.SHUT_WR)
                    while connection.recv(65536):
                        pass
                except ConnectionError:
                    pass
                except OSError as error:  # the server already closed the connection: not a hang
                    if error.errno != errno.ENOTCONN:
                        raise

        exchange()
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [record.getMessage() for record in errors]
    assert "Traceback" not in caplog.text
