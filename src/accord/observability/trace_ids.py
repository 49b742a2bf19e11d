"""The trace a line belongs to (for the audit log and JSON logs), with or without tracing."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from contextvars import ContextVar

from starlette.types import ASGIApp, Receive, Scope, Send

_TRACEPARENT = re.compile(r"[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}")


class RequestTrace:
    """The ids of the span that served one HTTP request, once tracing made it: for the lines
    logged after that span stopped being current (uvicorn's access line)."""

    __slots__ = ("ids",)

    def __init__(self) -> None:
        self.ids: tuple[str, str] | None = None


CURRENT_REQUEST: ContextVar[RequestTrace | None] = ContextVar("accord_request", default=None)


class RequestTraceScope:
    """ASGI middleware giving each HTTP request a `RequestTrace` (tracing fills it in)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = CURRENT_REQUEST.set(RequestTrace())
        try:
            await self.app(scope, receive, send)
        finally:
            CURRENT_REQUEST.reset(token)


def current_ids() -> tuple[str, str] | None:
    """The trace and span ids (hex) of the OpenTelemetry span current here, else of the span
    that served the request being answered, if tracing is on (OpenTelemetry is never imported
    for this) and there is one."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        request = CURRENT_REQUEST.get()
        return request.ids if request is not None else None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def trace_id_of(headers: Mapping[str, str]) -> str | None:
    """The trace id of the span current here, else the one a request's `traceparent` names."""
    ids = current_ids()
    if ids is not None:
        return ids[0]
    match = _TRACEPARENT.fullmatch(headers.get("traceparent", "").strip())
    return match.group(1) if match else None
