"""Servers of cards a careful reader refuses: one far too large, one that is other JSON."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from accord.samples import echo

HUGE_BYTES = 3 * 1024 * 1024
STREAMED_BYTES = 8 * 1024 * 1024
"""What the chunked card would be, were it read to its end."""


def huge_card_server(*, declared: bool) -> Starlette:
    """Serves a valid echo card padded to HUGE_BYTES at the well-known path: with its
    Content-Length (`declared`), or streamed in chunks without one (STREAMED_BYTES then)."""
    card = echo.agent.card("http://127.0.0.1/").to_wire()
    head = json.dumps({**card, "padding": ""})[:-2].encode()

    async def stream() -> AsyncIterator[bytes]:
        yield head
        chunk = b"x" * 65536
        for _ in range(STREAMED_BYTES // len(chunk)):
            yield chunk
        yield b'"}'

    async def serve(request: Request) -> Response:
        if declared:
            body = head + b"x" * HUGE_BYTES + b'"}'
            return Response(body, media_type="application/json")
        return StreamingResponse(stream(), media_type="application/json")

    return Starlette(routes=[Route("/.well-known/agent-card.json", serve)])


def internal_service() -> Starlette:
    """An internal service answering JSON everywhere (`/anything` included), no agent card."""

    async def secrets(request: Request) -> JSONResponse:
        return JSONResponse({"secret": "internal-service-data", "path": request.url.path})

    return Starlette(routes=[Route("/{path:path}", secrets)])
