"""Server-Sent Events framing, with keep-alive comments while a stream is idle."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

KEEPALIVE = b": keep-alive\n\n"


def sse_event(data: bytes, event_id: int | None = None) -> bytes:
    """One SSE event whose data is a single JSON line."""
    if event_id is None:
        return b"data: " + data + b"\n\n"
    return b"id: " + str(event_id).encode() + b"\ndata: " + data + b"\n\n"


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
