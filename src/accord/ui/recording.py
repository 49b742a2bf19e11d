"""RecordingTransport: an httpx transport that hands every request and response frame to a log.

The log of the current conversation turn is found in a context variable, so the accord
`Client` needs no change: whatever it sends and receives while a turn runs is recorded.
Streamed responses (SSE) are recorded one event frame at a time, as they arrive.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar

import httpx

WireSink = Callable[[str, str], None]
"""Takes a frame's kind and its text: `request` (line, headers, body), `response` (status line,
headers), then the body as one `body` or, for an event stream, each event as a `frame`."""

CURRENT_SINK: ContextVar[WireSink | None] = ContextVar("accord_ui_wire_sink", default=None)

SHOWN_HEADERS = (
    "content-type", "accept", "a2a-version", "a2a-extensions", "last-event-id", "traceparent",
)  # fmt: skip
CURRENT_TRACE: ContextVar[str | None] = ContextVar("accord_ui_trace", default=None)
"""The trace id of the turn being recorded: its requests carry it in `traceparent` (unless
tracing in this process gave them one), so the agents' spans of a turn are one trace."""
MAX_FRAME = 200_000


class RecordingTransport(httpx.AsyncBaseTransport):
    """Wraps another transport; while `CURRENT_SINK` is set, every exchange goes to it."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self._inner = inner if inner is not None else httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        sink = CURRENT_SINK.get()
        if sink is None:
            return await self._inner.handle_async_request(request)
        trace = CURRENT_TRACE.get()
        if trace is not None and "traceparent" not in request.headers:
            request.headers["traceparent"] = f"00-{trace}-{secrets.token_hex(8)}-01"
        body = await request.aread()
        sink("request", _head(f"{request.method} {request.url}", request.headers) + _text(body))
        response = await self._inner.handle_async_request(request)
        sink("response", _head(f"HTTP {response.status_code}", response.headers).rstrip())
        streamed = "text/event-stream" in response.headers.get("content-type", "")
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_RecordedStream(response, sink, by_event=streamed),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class _RecordedStream(httpx.AsyncByteStream):
    """A response body passed through unchanged, its frames (SSE events, or the whole body)
    handed to the sink as they complete."""

    def __init__(self, response: httpx.Response, sink: WireSink, *, by_event: bool) -> None:
        self._response = response
        self._sink = sink
        self._by_event = by_event
        self._buffer = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._response.aiter_raw():
            self._buffer += chunk.replace(b"\r\n", b"\n")
            if self._by_event:
                *frames, self._buffer = self._buffer.split(b"\n\n")
                for frame in frames:
                    if frame.strip():
                        self._sink("frame", _text(frame))
            yield chunk
        if self._buffer.strip():
            self._sink("frame" if self._by_event else "body", _text(self._buffer))
        self._buffer = b""

    async def aclose(self) -> None:
        await self._response.aclose()


def _head(first_line: str, headers: httpx.Headers) -> str:
    lines = [first_line]
    lines += [f"{name}: {headers[name]}" for name in SHOWN_HEADERS if name in headers]
    return "\n".join(lines) + "\n\n"


def _text(body: bytes) -> str:
    return clipped(body.decode("utf-8", errors="replace"))


def clipped(text: str) -> str:
    """`text`, cut at MAX_FRAME characters (saying how long it was)."""
    return text if len(text) <= MAX_FRAME else text[:MAX_FRAME] + f"\n… ({len(text)} characters)"
