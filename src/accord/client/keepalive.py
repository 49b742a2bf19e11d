"""KeepAliveTransport: an httpx transport doing plain HTTP/1.1 on kept-alive asyncio connections."""

from __future__ import annotations

import asyncio
import select
import weakref
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import cast

import httptools
import httpx

LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=16, keepalive_expiry=4)
"""Connections open per origin, of them kept idle between requests, and seconds kept idle:
less than the 5 s common servers (uvicorn, Node) keep one, so that a request is rarely sent
on a connection the server is closing at that moment (a POST could not be sent again)."""
BUFFERED = 1 << 20
"""Bytes of a response body read ahead of its reader before the socket stops being read."""
CLOSED = "Cannot send a request, as the transport has been closed."
"""What a closed transport answers a request with (httpx's words for a closed client)."""
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
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if not takes(request.method, url) or "transfer-encoding" in request.headers:
            return await self._fallback.handle_async_request(request)
        body = b"".join([chunk async for chunk in request.stream])  # type: ignore[union-attr]
        data = request_bytes(request.method, url.raw_path, request.headers.raw, body)
        return await self.exchange(request.method, url, data, request.extensions.get("timeout", {}))

    async def exchange(
        self, method: str, url: httpx.URL, data: bytes, timeouts: Mapping[str, float | None]
    ) -> httpx.Response:
        """Send a request's bytes (`request_bytes`) to `url`'s origin, which `takes`; the
        response once its head came, its body streamed. `timeouts` are httpx's (connect,
        read, write, pool)."""
        connection, body = await self._headed(method, url, data, timeouts)
        return _response(connection, body)

    async def fetch(
        self, method: str, url: httpx.URL, data: bytes, timeouts: Mapping[str, float | None]
    ) -> Answer:
        """`exchange`, the response read whole: its status, headers and body (decoded as
        httpx decodes it, when it has a content coding)."""
        connection, body = await self._headed(method, url, data, timeouts)
        status, raw = connection.status, connection.headers
        fields = header_fields(raw)
        if "content-encoding" in fields:
            return await _decoded(_response(connection, body))
        try:
            content = await body.whole()
        finally:
            await body.aclose()  # the connection goes back to the pool (closed unless whole)
        return Answer(status, fields, content, raw)

    async def _headed(
        self, method: str, url: httpx.URL, data: bytes, timeouts: Mapping[str, float | None]
    ) -> tuple[_Connection, _Body]:
        """Send a request; its connection once the response's head came, and its body."""
        if self._closed:
            raise RuntimeError(CLOSED)
        origin = (url.host, url.port or 80)
        pool = self._pools.get(origin)
        if pool is None or pool.loop is not asyncio.get_running_loop():  # the first one ended
            pool = self._pools[origin] = _Pool(self._limits)
        await pool.take(timeouts.get("pool"))
        try:
            if pool.closed:  # closed while this request waited for a slot
                raise RuntimeError(CLOSED)
            connection = pool.reused()
            if connection is None or not await _answered_again(connection, data, method, timeouts):
                connection = await pool.connect(origin, timeouts.get("connect"))
                if not connection.sent(data):
                    raise httpx.WriteError(f"{origin[0]}:{origin[1]} closed the connection")
                await connection.answer(timeouts.get("write"), timeouts.get("read"))
        except BaseException:
            pool.give_back(None)
            raise
        return connection, _Body(connection, timeouts.get("read"), pool)

    async def aclose(self) -> None:
        """Close every connection, idle or in use (their responses' readers get an error);
        later requests are refused, as by a closed `httpx.AsyncClient`."""
        self._closed = True
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
        self.closed = False

    async def take(self, seconds: float | None) -> None:
        """Wait for a slot, `seconds` at most."""
        if not self._slots.locked():  # one is free: taken at once, no timer to arm
            await self._slots.acquire()
            return
        try:
            async with asyncio.timeout(seconds):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("no connection to the server came free in time") from None

    async def connect(self, origin: tuple[str, int], seconds: float | None) -> _Connection:
        connection = await _Connection.connect(origin, seconds)
        if self.closed:  # closed while connecting
            connection.close()
            raise RuntimeError(CLOSED)
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
        if (
            connection is not None
            and connection.reusable
            and len(self._idle) < self._max_idle
            and not self.closed
        ):
            self._idle.append((asyncio.get_running_loop().time(), connection))
        elif connection is not None:
            connection.close()
        self._slots.release()

    def close(self) -> None:
        self.closed = True
        self._idle.clear()
        for connection in list(self._open):
            connection.close()

    def _close_idle(self) -> None:
        for _, connection in self._idle:
            connection.close()
        self._idle.clear()


async def _answered_again(
    connection: _Connection, data: bytes, method: str, timeouts: Mapping[str, float | None]
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
        if connection.answered or method not in IDEMPOTENT:
            raise
        return False
    return True


def takes(method: str, url: httpx.URL) -> bool:
    """Whether the transport itself sends a request (with a body of known length), rather
    than its fallback: plain `http://`, and not `HEAD` (a response without the body its head
    announces)."""
    return url.scheme == "http" and method != "HEAD"


class Answer:
    """A response read whole, as a call reads it: its status, headers (looked up by name in
    any case) and body."""

    __slots__ = ("content", "headers", "raw_headers", "status_code")

    def __init__(
        self,
        status_code: int,
        headers: Mapping[str, str],
        content: bytes,
        raw_headers: list[tuple[bytes, bytes]],
    ) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content
        self.raw_headers = raw_headers
        """The header fields as they came (names in their case, a name repeated)."""

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300


class Fields(dict[str, str]):
    """A response's header fields by lowercase name, looked up by name in any case."""

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return super().get(name.lower(), default)


def header_fields(raw: list[tuple[bytes, bytes]]) -> Mapping[str, str]:
    """Header fields as `httpx.Headers` reads them (the values of a name repeated joined
    with ", "), without building one unless a field is not ASCII (then httpx guesses the
    encoding)."""
    fields = Fields()
    try:
        for name, value in raw:
            key, text = name.decode("ascii").lower(), value.decode("ascii")
            known = dict.get(fields, key)
            fields[key] = text if known is None else f"{known}, {text}"
    except UnicodeDecodeError:
        return httpx.Headers(raw)
    return fields


def answer_of(response: httpx.Response) -> Answer:
    """An httpx response read whole, as an Answer."""
    return Answer(response.status_code, response.headers, response.content, response.headers.raw)


async def _decoded(response: httpx.Response) -> Answer:
    """A response with a content coding, read whole and decoded by httpx."""
    try:
        await response.aread()
    finally:
        await response.aclose()
    return answer_of(response)


def _response(connection: _Connection, body: _Body) -> httpx.Response:
    """The response whose head `connection` read, its `body` streamed."""
    return httpx.Response(
        connection.status,
        headers=connection.headers,
        stream=body,
        extensions={"http_version": b"HTTP/1.1"},
    )


def request_bytes(
    method: str, target: bytes, headers: Iterable[tuple[bytes, bytes]], body: bytes
) -> bytes:
    """An HTTP/1.1 request as sent: its line for `target` (path and query), headers, body."""
    lines = [b"%s %s HTTP/1.1" % (method.encode(), target)]
    lines.extend(b"%s: %s" % (name, value) for name, value in headers)
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def request_data(method: str, target: bytes, fields: list[tuple[str, str]], body: bytes) -> bytes:
    """`request_bytes` of header fields as text (ASCII: UnicodeEncodeError otherwise), their
    block encoded at once."""
    block = "".join([f"{name}: {value}\r\n" for name, value in fields]).encode("ascii")
    return b"%s %s HTTP/1.1\r\n%s\r\n%s" % (method.encode(), target, block, body)


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
        self._waiter: asyncio.Future[None] | None = None
        self._writable = asyncio.Event()
        self._writable.set()
        self._transport: asyncio.Transport | None = None
        self._poller: select.poll | None = None
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
        assert self._poller is not None
        return bool(self._poller.poll(0))

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
        if not self._writable.is_set():  # the socket's buffer is full: wait for it to drain
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
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        # A timer of its own, not asyncio.timeout: no task cancelled and uncancelled per wait.
        timer = None if seconds is None else loop.call_later(seconds, _expire, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    def taken(self, chunk: bytes) -> None:
        self._buffered -= len(chunk)
        if self._buffered < BUFFERED and self._transport is not None:
            self._transport.resume_reading()

    def drained(self) -> list[bytes]:
        """All the body's chunks come so far, taken at once (the socket read on)."""
        chunks = list(self.chunks)
        self.chunks.clear()
        if self._buffered >= BUFFERED and self._transport is not None:
            self._transport.resume_reading()
        self._buffered = 0
        return chunks

    def close(self) -> None:
        self.closed = True
        if self._transport is not None:
            self._transport.close()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self._poller = select.poll()  # one per connection: `readable` asks it before each reuse
        self._poller.register(transport.get_extra_info("socket").fileno(), select.POLLIN)

    def data_received(self, data: bytes) -> None:
        self.answered = True
        if self._parser is None:  # nothing asked: the server should not talk
            self.close()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self.close()  # the reader is told the connection broke off
        self._wake()

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._wake()
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


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(httpx.ReadTimeout("the server did not answer in time"))


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

    async def whole(self) -> bytes:
        """The rest of the body, once it came whole."""
        connection = self._connection
        parts: list[bytes] = []
        while True:
            parts += connection.drained()
            if connection.complete:
                return b"".join(parts)
            await connection.changed(self._timeout)

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            # A reader may stop early: the rest of a body that came whole is dropped and its
            # connection kept; one still coming is closed with its connection (give_back).
            self._connection.chunks.clear()
            pool.give_back(self._connection)
