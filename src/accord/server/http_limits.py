"""HttpLimits: what one slow or heavy client may hold of a uvicorn server, as uvicorn options."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from accord.server.corking import CorkedTransport


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """Bounds on each connection of a server, enforced while uvicorn reads the request.

    A request's line and headers must arrive within `header_timeout` seconds of its first
    byte (of the connection's opening, for the first request) and its body within
    `body_timeout` seconds of its headers, or the client gets 408 and the connection closes;
    its line and headers may take `max_header_bytes` bytes in at most `max_headers` headers
    (else 431, or 414 for the URL alone). Past `max_connections` open connections in this
    worker, a new one gets 503 with `Retry-After` and is closed. An idle keep-alive
    connection is closed after `keep_alive_timeout` seconds. A2A has no WebSocket binding:
    a request asking to upgrade is answered as plain HTTP, and its connection then closes.
    """

    header_timeout: float = 10.0
    body_timeout: float = 60.0
    max_header_bytes: int = 64 * 1024
    max_headers: int = 100
    max_connections: int = 1000
    keep_alive_timeout: float = 5.0

    def uvicorn_options(self, protocol_base: type | None = None) -> dict[str, Any]:
        """Keyword arguments for `uvicorn.run` or `uvicorn.Config` that apply these limits;
        `protocol_base` is another httptools protocol class to build on (TLS's, say)."""
        bases = (LimitedHttpProtocol,) + ((protocol_base,) if protocol_base else ())
        protocol = type("LimitedHttpProtocol", bases, {"limits": self})
        return {
            "http": protocol,
            "ws": "none",  # uvicorn's handshake waits forever on a POST asking to upgrade
            "timeout_keep_alive": max(1, math.ceil(self.keep_alive_timeout)),
        }


class _Refused(Exception):
    """Raised from a parser callback to stop reading a request the limits refuse."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


_LINGER = 2.0
"""Seconds a connection stays open after our end, to drain what the client still sends."""

_REASONS = {
    400: "Bad Request",
    503: "Service Unavailable",
    408: "Request Timeout",
    414: "URI Too Long",
    431: "Request Header Fields Too Large",
}


class LimitedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the deadlines and bounds of `limits`."""

    limits: ClassVar[HttpLimits] = HttpLimits()

    # The current phase's deadline (loop time), and the one timer that checks it: moving a
    # deadline later, as each request of a keep-alive connection does, sets no new timer.
    _deadline: float | None = None
    _timer: asyncio.TimerHandle | None = None
    _timer_at = math.inf
    _refusal: _Refused | None = None
    _upgrade_asked = False
    _in_head = True
    _head_bytes = 0
    _header_bytes = 0
    _header_count = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = CorkedTransport(transport, self.loop)  # type: ignore[assignment]
        if len(self.connections) > self.limits.max_connections:
            self._refuse(_Refused(503, "too many connections; retry soon"))
            return
        self._arm(self.limits.header_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refusal is not None or self._upgrade_asked:
            return  # after a refused request or one asking to upgrade: dropped until the close
        was_in_head = self._in_head
        super().data_received(data)
        if was_in_head and self._in_head and self._refusal is None:
            # Headers incomplete before and after this chunk: all of it was headers.
            self._head_bytes += len(data)
            if self._head_bytes > self.limits.max_header_bytes:
                self._refuse(_Refused(431, "the request's headers are too large"))

    def send_400_response(self, msg: str) -> None:
        self._refuse(self._refusal or _Refused(400, msg))

    # parser callbacks

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._head_bytes = self._header_bytes = self._header_count = 0
        self._arm(self.limits.header_timeout)

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > self.limits.max_header_bytes:
            raise self._refused(414, "the request's URL is too long")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        self._header_bytes += len(name) + len(value)
        if self._header_count > self.limits.max_headers:
            raise self._refused(
                431, f"a request may have at most {self.limits.max_headers} headers"
            )
        if self._header_bytes > self.limits.max_header_bytes:
            raise self._refused(431, "the request's headers are too large")
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        if self.parser.should_upgrade() or not _has_body(self.headers):
            self._disarm()
        else:
            self._arm(self.limits.body_timeout)
        super().on_headers_complete()
        if self.parser.should_upgrade():
            # The parser reads nothing past a request asking to upgrade (not even its body):
            # the app answers it as it stands, and the connection ends with that answer.
            self._upgrade_asked = True
            self.cycle.keep_alive = False
            self.cycle.transport = _ClosesLingering(self.transport, self.loop)  # type: ignore[assignment]

    def _unsupported_upgrade_warning(self) -> None:
        pass  # a client's request answered as plain HTTP: nothing for the operator to fix

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_head, self._head_bytes = True, 0  # what comes next starts another request
        super().on_message_complete()

    # deadlines and refusals

    def _arm(self, seconds: float) -> None:
        self._deadline = self.loop.time() + seconds
        if self._deadline < self._timer_at:  # no timer, or one that would check too late
            if self._timer is not None:
                self._timer.cancel()
            self._start_timer()

    def _disarm(self) -> None:
        self._deadline = None  # a timer still set finds nothing due

    def _start_timer(self) -> None:
        assert self._deadline is not None
        self._timer_at = self._deadline
        self._timer = self.loop.call_at(self._deadline, self._check_deadline)

    def _check_deadline(self) -> None:
        self._timer, self._timer_at = None, math.inf
        if self._deadline is None:
            return
        if self.loop.time() < self._deadline:  # moved later since the timer was set
            self._start_timer()
            return
        self._timed_out()

    def _timed_out(self) -> None:
        self._deadline = None
        what = "headers" if self._in_head else "body"
        cycle = self.cycle if not self._in_head else None
        if cycle is not None:
            # The app may be waiting for the rest of the body: it hears the client left.
            cycle.disconnected = True
            cycle.message_event.set()
            if cycle.response_started:
                self.transport.close()
                return
        self._refuse(_Refused(408, f"the request's {what} took too long to arrive"))

    def _refused(self, status: int, reason: str) -> _Refused:
        """The refusal to raise from a parser callback (uvicorn then calls send_400_response)."""
        self._refusal = _Refused(status, reason)
        return self._refusal

    def _refuse(self, refusal: _Refused) -> None:
        self._refusal = refusal
        self._write_refusal(refusal.status, _REASONS[refusal.status], refusal.reason)

    def _write_refusal(self, status: int, phrase: str, reason: str) -> None:
        self._disarm()
        if self.transport.is_closing():
            return
        body = reason.encode()
        head = (
            f"HTTP/1.1 {status} {phrase}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n"
        )
        if status == 503:
            head += "retry-after: 1\r\n"
        self.transport.write(head.encode() + b"\r\n" + body)
        _close_lingering(self.transport, self.loop)


def _close_lingering(transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
    """Closing at once, with the client's bytes unread, would reset the connection and could
    lose the answer: end our side, drop what still comes, close a moment later."""
    if transport.can_write_eof():
        transport.write_eof()
    loop.call_later(_LINGER, transport.close)


class _ClosesLingering:
    """A connection's transport whose `close` lingers, for the cycle of a request asking to
    upgrade: it closes the connection after the answer, while the client may still send."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop

    def close(self) -> None:
        _close_lingering(self._transport, self._loop)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _has_body(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return True
    return False
