"""The trace a line belongs to (for the audit log and JSON logs), with or without tracing."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping

_TRACEPARENT = re.compile(r"[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}")


def current_ids() -> tuple[str, str] | None:
    """The trace and span ids (hex) of the OpenTelemetry span current here, if tracing is on
    (OpenTelemetry is never imported for this) and a span is current."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def trace_id_of(headers: Mapping[str, str]) -> str | None:
    """The trace id of the span current here, else the one a request's `traceparent` names."""
    ids = current_ids()
    if ids is not None:
        return ids[0]
    match = _TRACEPARENT.fullmatch(headers.get("traceparent", "").strip())
    return match.group(1) if match else None
