"""What each HTTP binding checks on a request: JSON content type, body limit, Last-Event-ID."""

from __future__ import annotations

from collections.abc import Collection

from starlette.requests import Request

from accord.errors import InvalidRequest

JSON = "application/json"
DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024


class BodyTooLarge(InvalidRequest):
    """The request body is over the server's limit (HTTP 413)."""


class WrongContentType(InvalidRequest):
    """The request body is not declared as JSON (HTTP 415)."""


def check_content_type(request: Request, accepted: Collection[str] = (JSON,)) -> None:
    """Refuse a request whose Content-Type (parameters aside) is not one of `accepted`."""
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() not in accepted:
        raise WrongContentType(
            f"Content-Type must be {' or '.join(accepted)}, got {content_type or 'none'!r}"
        )


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused as soon as it (or its declared length) exceeds `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(_too_large(limit))
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(_too_large(limit))
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int) -> str:
    return f"request body exceeds the limit of {limit} bytes"


def last_event_id(request: Request) -> int | None:
    """The event number a reconnecting stream saw last (`Last-Event-ID`), if it sent one."""
    value = request.headers.get("last-event-id")
    if value is None:
        return None
    if not value.strip().isdigit():
        raise InvalidRequest(
            f"Last-Event-ID must be an event number this server sent, got {value!r}"
        )
    return int(value)
