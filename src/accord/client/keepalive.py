"""KeepAliveTransport: an httpx transport doing plain HTTP/1.1 on kept-alive asyncio connections."""

from __future__ import annotations

import asyncio
import select
import weakref
from collections import deque
from collections.abc import AsyncIterator
from typing import cast

import httptools
import httpx

LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=16, keepalive_expiry=4)
"""Connections open per origin, of them kept idle between requests, and seconds kept idle:
less than the 5 s common servers (uvicorn, Node) keep one, so that a request is rarely sent
on a connection the server is closing at that moment (a POST could not be sent again)."""
BUFFERED = 1 << 20
"""Bytes of a response body read ahead of its reader before the socket stops being read."""
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"})
"""Methods whose request may be sent twice to the same effect (RFC 9110, section 9.2.2)."""


class KeepAliveTransport(httpx.AsyncBaseTransport):
    """What a client of an agent on plain `http://` needs, and no more: HTTP/1.1 requests with
    their whole body, on connections kept alive per host; responses parsed by httptools (as
    uvicorn's), their bodies (by length or chunked) streamed as they arrive. An accord
    `Client` call over it costs about a third less CPU than over httpx's own transport
    (httpcore, anyio, h11). Other requests (`https://`, a body of unknown length, `HEAD`) go to
    httpx's own transport, `fallback`. `limits` are httpx's, counted per origin: a request
    waits for a connection to the origin at most the pool timeout. Give it to a Client as
    `http_transport`."""

    def __init__(
        self, fallback: httpx.AsyncBaseTransport | None = None, limits: httpx.Limits = LIMITS
    ) -> None:
        self._fallback = fallback or httpx.AsyncHTTPTransport()
        self._limits = limits
        self._pools: dict[tuple[str, int], _Pool] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if (
            request.url.scheme != "http"
            or "transfer-encoding" in request.headers
            or request.method == "HEAD"  # a response without the body its head announces
        ):
            return await self._fallback.handle_async_request(request)
        timeout = request.extensions.get("timeout", {})
        origin = (request.url.host, request.url.port or 80)
        body = b"".join([chunk async for chunk in request.stream])  # type: ignore[union-attr]
        data = _head(request) + body
        pool = self._pools.get(origin)
        if pool is None or pool.loop is not asyncio.get_running_loop():  # the first one ended
            pool = self._pools[origin] = _Pool(self._limits)
        await pool.take(timeout.get("pool"))
        try:
            connection = pool.reused()
            if connection is None or not await _answered_again(connection, data, request, timeout):
                connection = await pool.connect(origin, timeout.get("connect"))
                if not connection.sent(data):
                    raise httpx.WriteError(f"{origin[0]}:{origin[1]} closed the connection")
                await connection.answer(timeout.get("write"), timeout.get("read"))
        except BaseException:
            pool.give_back(None)
            raise
        return httpx.Response(
            connection.status,
            headers=connection.headers,
            stream=_Body(connection, timeout.get("read"), pool),
            extensions={"http_version": b"HTTP/1.1"},
        )

    async def aclose(self) -> None:
        """Close every connection, idle or in use (their responses' readers get an error)."""
        pools, self._pools = self._pools, {}
        for pool in pools.values():
            pool.close()
        await self._fallback.aclose()


class _Pool:
    """The connections to one origin on one event loop: a slot for each open (requests wait
    for one), those idle (most recently used last)."""

    def __init__(self, limits: httpx.Limits) -> None:
        self.loop = asyncio.get_running_loop()
        unbounded = 1 << 30
        self._slots = asyncio.Semaphore(limits.max_connections or unbounded)
        kept = limits.max_keepalive_connections
        self._max_idle = unbounded if kept is None else kept
        self._expiry = limits.keepalive_expiry
        self._idle: list[tuple[float, _Connection]] = []
        self._open: weakref.WeakSet[_Connection] = weakref.WeakSet()

    async def take(self, seconds: float | None) -> None:
        """Wait for a slot, `seconds` at most."""
        try:
            async with asyncio.timeout(seconds):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("no connection to the server came free in time") from None

    async def connect(self, origin: tuple[str, int], seconds: float | None) -> _Connection:
        connection = await _Connection.connect(origin, seconds)
        self._open.add(connection)
        return connection

    def reused(self) -> _Connection | None:
        """An idle connection still fit for a request, if any (the others closed)."""
        now = asyncio.get_running_loop().time()
        while self._idle:
            since, connection = self._idle.pop()
            if self._expiry is not None and now - since >= self._expiry:
                self._close_idle()  # those kept longer than this one
            elif connection.open and not connection.readable:
                return connection
            connection.close()
        return None

    def give_back(self, connection: _Connection | None) -> None:
        """Free a slot, keeping its connection idle if it can take another request (its
        response came whole, and neither side said to close it), else closing it."""
        if connection is not None and connection.reusable and len(self._idle) < self._max_idle:
            self._idle.append((asyncio.get_running_loop().time(), connection))
        elif connection is not None:
            connection.close()
        self._slots.release()

    def close(self) -> None:
        self._idle.clear()
        for connection in list(self._open):
            connection.close()

    def _close_idle(self) -> None:
        for _, connection in self._idle:
            connection.close()
        self._idle.clear()


async def _answered_again(
    connection: _Connection, data: bytes, request: httpx.Request, timeouts: dict[str, float | None]
) -> bool:
    """Send a request on a kept-alive connection and read the head of its response; False
    when the request may go again on a fresh connection instead.

    A server may close a connection it keeps idle at any moment, even as a request is on its
    way. A request is sent again only when that cannot repeat its effect: when the connection
    was found closed before anything was written, or when the server closed it before
    answering a byte and the method is idempotent; a server may act on a request and fail
    before it answers, so other methods get the error."""
    if not connection.sent(data):
        return False
    try:
        await connection.answer(timeouts.get("write"), timeouts.get("read"))
    except httpx.RemoteProtocolError:
        if connection.answered or request.method not in IDEMPOTENT:
            raise
        return False
    return True


def _head(request: httpx.Request) -> bytes:
    lines = [b"%s %s HTTP/1.1" % (request.method.encode(), request.url.raw_path)]
    lines.extend(b"%s: %s" % (name, value) for name, value in request.headers.raw)
    return b"\r\n".join(lines) + b"\r\n\r\n"


class _Connection(asyncio.Protocol):
    """One connection: the response to its request as httptools parses it."""

    def __init__(self, origin: tuple[str, int]) -> None:
        self.origin = origin
        self.closed = False
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunks: deque[bytes] = deque()
        self.complete = False
        self._buffered = 0
        self._changed = asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()
        self._transport: asyncio.Transport | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._head_done = False
        self._keep_alive = False
        self.answered = False
        """Whether any byte came in since the last request was sent."""

    @classmethod
    async def connect(cls, origin: tuple[str, int], seconds: float | None) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(seconds):
                _, connection = await loop.create_connection(lambda: cls(origin), *origin)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"connecting to {origin[0]}:{origin[1]} timed out") from None
        except OSError as exc:
            raise httpx.ConnectError(str(exc)) from None
        return connection

    @property
    def open(self) -> bool:
        """Whether the connection can take a request (the server may close one kept idle)."""
        transport = self._transport
        return not self.closed and transport is not None and not transport.is_closing()

    @property
    def readable(self) -> bool:
        """Whether the socket has something to read: idle, it is the server's close not yet
        seen by the event loop (or bytes out of turn), so the connection is not reused."""
        assert self._transport is not None
        poller = select.poll()
        poller.register(self._transport.get_extra_info("socket").fileno(), select.POLLIN)
        return bool(poller.poll(0))

    @property
    def reusable(self) -> bool:
        return self.complete and self._keep_alive and self.open

    def sent(self, data: bytes) -> bool:
        """Send a request; False when the connection turns out closed."""
        if not self.open or self._transport is None:
            return False
        self.status, self.headers, self.complete, self._head_done = 0, [], False, False
        self.chunks.clear()
        self._buffered = 0
        self.answered = False
        self._parser = httptools.HttpResponseParser(self)
        try:
            self._transport.write(data)
        except RuntimeError:  # uvloop's, for a connection the server closed
            self.close()
            return False
        return True

    async def answer(self, write: float | None, read: float | None) -> None:
        """Wait for the request to be written (`write` seconds at most) and the response's
        head to come (`read`); the connection is closed if either does not."""
        try:
            async with asyncio.timeout(write):
                await self._writable.wait()
        except TimeoutError:
            self.close()
            raise httpx.WriteTimeout("the server did not take the request in time") from None
        try:
            while not self._head_done:
                await self.changed(read)
        except BaseException:
            self.close()
            raise

    async def changed(self, seconds: float | None) -> None:
        """Wait for the next part of the response (ReadTimeout after `seconds`; an error
        when the connection broke off before the response's end)."""
        if self.closed and not self.complete:
            raise httpx.RemoteProtocolError("the server closed the connection mid-response")
        self._changed.clear()
        try:
            async with asyncio.timeout(seconds):
                await self._changed.wait()
        except TimeoutError:
            raise httpx.ReadTimeout("the server did not answer in time") from None

    def taken(self, chunk: bytes) -> None:
        self._buffered -= len(chunk)
        if self._buffered < BUFFERED and self._transport is not None:
            self._transport.resume_reading()

    def close(self) -> None:
        self.closed = True
        if self._transport is not None:
            self._transport.close()

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self.answered = True
        if self._parser is None:  # nothing asked: the server should not talk
            self.close()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self.close()  # the reader is told the connection broke off
        self._changed.set()

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._changed.set()
        self._writable.set()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        assert self._parser is not None
        self.status = self._parser.get_status_code()
        self._keep_alive = self._parser.should_keep_alive()
        self._head_done = True

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self._buffered += len(body)
        if self._buffered >= BUFFERED and self._transport is not None:
            self._transport.pause_reading()

    def on_message_complete(self) -> None:
        self.complete = True


class _Body(httpx.AsyncByteStream):
    """A response's body as it arrives; its connection goes back to the pool once closed."""

    def __init__(self, connection: _Connection, timeout: float | None, pool: _Pool) -> None:
        self._connection = connection
        self._timeout = timeout
        self._pool: _Pool | None = pool

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        while True:
            while connection.chunks:
                chunk = connection.chunks.popleft()
                connection.taken(chunk)
                yield chunk
            if connection.complete:
                return
            await connection.changed(self._timeout)

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            # A reader may stop early: the rest of a body that came whole is dropped and its
            # connection kept; one still coming is closed with its connection (give_back).
            self._connection.chunks.clear()
            pool.give_back(self._connection)
