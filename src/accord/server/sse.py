"""Server-Sent Events framing, with keep-alive comments while a stream is idle."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping

from starlette.responses import StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from accord.core.failures import report_failure
from accord.core.records import EventRecord, close_stream
from accord.errors import A2AError, InternalError

log = logging.getLogger("accord.server")

KEEPALIVE = b": keep-alive\n\n"


def sse_event(data: bytes, event_id: int | None = None, *, event: str | None = None) -> bytes:
    """One SSE event whose data is a single JSON line (`event` names its type, if not a message)."""
    head = b"" if event is None else b"event: " + event.encode() + b"\n"
    if event_id is not None:
        head += b"id: " + str(event_id).encode() + b"\n"
    return head + b"data: " + data + b"\n\n"


class EventStreamResponse(StreamingResponse):
    """A streaming response that ends its body properly even when the server cancels it.

    uvicorn cancels the requests still running when its graceful shutdown timeout runs out;
    a plain StreamingResponse then leaves the client with a truncated body and the server
    log with a traceback. This one ends the body, so the client sees the stream end as
    usual (and can resubscribe, with its Last-Event-ID, to a server that is still up).
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = ended = False

        async def tracked(message: Message) -> None:
            nonlocal started, ended
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                ended = True
            await send(message)

        try:
            await super().__call__(scope, receive, tracked)
        except asyncio.CancelledError:
            if not started or ended:
                raise
            # The server is done waiting for this stream: finish it, then let the request end.
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()


def sse_response(chunks: AsyncIterator[bytes], headers: Mapping[str, str]) -> StreamingResponse:
    """A `text/event-stream` response sending `chunks` (with keep-alives) uncached, unbuffered."""
    return EventStreamResponse(
        with_keepalive(chunks),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **headers},
    )


async def record_frames(
    records: AsyncIterator[EventRecord],
    encode: Callable[[EventRecord], bytes],
    error_event: Callable[[A2AError], bytes],
) -> AsyncIterator[bytes]:
    """The SSE events of a stream of records, each with its sequence number as `id:`.

    `encode` makes an event's data from a record; `error_event` makes the whole last event
    of a stream that fails. The records are closed however the stream ends.
    """
    try:
        async for record in records:
            if record.error is not None:
                yield error_event(record.error)
                return
            yield sse_event(encode(record), record.seq or None)
    except A2AError as exc:
        yield error_event(exc)
    except Exception as exc:
        yield error_event(InternalError(report_failure(log, "Internal error", exc, where="stream")))
    finally:
        await close_stream(records)


async def with_keepalive(
    chunks: AsyncIterator[bytes], interval: float = 15.0
) -> AsyncIterator[bytes]:
    """Pass `chunks` through, sending a comment whenever nothing was sent for `interval`."""
    pending: asyncio.Future[bytes] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(chunks))
            done, _ = await asyncio.wait({pending}, timeout=interval)
            if not done:
                yield KEEPALIVE
                continue
            try:
                chunk = pending.result()
            except StopAsyncIteration:
                pending = None
                return
            pending = None
            yield chunk
    finally:
        if pending is not None:
            # `chunks` is running inside `pending` and cannot be closed from here (aclose
            # would raise); cancelling that step ends the generator and runs its cleanup.
            pending.cancel()
        else:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
