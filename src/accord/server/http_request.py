"""What each HTTP binding checks on a request (JSON content type, body limit),
and the lean request and response types of the JSON-RPC shortcut."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping

from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from accord.errors import A2AError, BodyTooLarge, RateLimited, Unauthenticated, WrongContentType
from accord.server.body_budget import BodyBudget

JSON = "application/json"
DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
_DIGITS = re.compile(r"[0-9]{1,18}")


def check_content_type(request: Request, accepted: Collection[str] = (JSON,)) -> None:
    """Refuse a request whose Content-Type (parameters aside) is not one of `accepted`."""
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() not in accepted:
        raise WrongContentType(
            f"Content-Type must be {' or '.join(accepted)}, got {content_type or 'none'!r}"
        )


async def read_body(request: Request, limit: int, budget: BodyBudget | None = None) -> bytearray:
    """The request body, refused as soon as it (or its declared length) exceeds `limit` bytes.

    Its bytes are gathered in one buffer (parsers take it as it is: no copy); with `budget`,
    room for them is reserved first (ServerBusy when there is none).
    """
    declared = request.headers.get("content-length")
    expected = int(declared) if declared is not None and _DIGITS.fullmatch(declared) else None
    if expected is not None and expected > limit:
        raise BodyTooLarge(_too_large(limit))
    if budget is not None and expected is not None and budget.counts(expected):
        await budget.reserve(request.scope, expected)
    body = bytearray()
    more = True
    while more:  # `request.stream()` would be an async generator per request: dearer
        message = await request.receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunk = message.get("body", b"")
        more = message.get("more_body", False)
        size = len(body) + len(chunk)
        if size > limit:
            raise BodyTooLarge(_too_large(limit))
        if budget is not None and expected is None and budget.counts(size):
            await budget.reserve(request.scope, size)
        body += chunk
    return body


def _too_large(limit: int) -> str:
    return f"request body exceeds the limit of {limit} bytes"


def error_headers(error: A2AError) -> dict[str, str]:
    """The headers an error's answer carries (HTTP headers, gRPC trailers): `WWW-Authenticate`
    naming what credentials are accepted, `Retry-After` (whole seconds) for a caller over a
    limit. The one place headers are made from an error's content, each value `header_value`."""
    if isinstance(error, Unauthenticated) and error.challenges:
        return {"WWW-Authenticate": header_value(", ".join(error.challenges))}
    if isinstance(error, RateLimited):
        return {"Retry-After": str(max(1, math.ceil(error.retry_after)))}
    return {}


_NOT_SENDABLE = re.compile(r"[^\x20-\x7e]")
MAX_HEADER_VALUE = 2048


def header_value(text: str) -> str:
    """`text` as a header value every peer can send and read: printable ASCII only (any other
    character, line breaks and non-Latin-1 ones included, becomes `?`), at most
    MAX_HEADER_VALUE characters. Credentials, tokens and upstream answers put anything in
    the text a header repeats; HTTP and gRPC metadata carry only this."""
    value = _NOT_SENDABLE.sub("?", text)
    return value if len(value) <= MAX_HEADER_VALUE else value[: MAX_HEADER_VALUE - 3] + "..."


_NO_QUERY: Mapping[str, str] = {}


def query_of(request: Request) -> Mapping[str, str]:
    """The request's query parameters: without a query string, an empty mapping rather than
    Starlette's QueryParams parsed from nothing."""
    return request.query_params if request.scope.get("query_string") else _NO_QUERY


def peer_address(scope: Scope) -> str | None:
    """The client's `host:port`, as the server saw the connection."""
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else None


class IndexedHeaders(Headers):
    """Starlette's request headers, looked up in a dict rather than by scanning the list.

    A request's headers are read a dozen times (content type and length, version,
    extensions, Last-Event-ID); each scan encodes the name again. As with `Headers`, the
    first of repeated headers wins.
    """

    def __init__(self, scope: Scope) -> None:
        # What `Headers(scope=scope)` does, without its copy of a list the server made already.
        raw: list[tuple[bytes, bytes]] = scope["headers"]
        if type(raw) is not list:
            raw = scope["headers"] = list(raw)
        self._list = raw
        self._index = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in reversed(raw)
        }

    def __getitem__(self, key: str) -> str:
        return self._index[key.lower()]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._index

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return self._index.get(key.lower(), default)


class IndexedRequest(Request):
    """A Starlette request whose headers are IndexedHeaders."""

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The attributes `Request.__init__` sets, set here without its chain of calls.
        self.scope = scope
        self._receive = receive
        self._send = send
        self._stream_consumed = False
        self._is_disconnected = False
        self._form = None
        self._headers = IndexedHeaders(scope)


class JsonResponse(Response):
    """A JSON body (of `media_type`, JSON or a type built on it) with its headers encoded once,
    without Starlette's general header logic.

    The body may be given in pieces (a large result inside its envelope), sent one after
    the other rather than joined into one more copy.
    """

    media_type = JSON

    def __init__(
        self,
        body: bytes | tuple[bytes, ...],
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str = JSON,
    ) -> None:
        self.status_code = status_code
        self.media_type = media_type
        self.background = None
        self.pieces = body if isinstance(body, tuple) else (body,)
        self.body = self.pieces[0] if len(self.pieces) == 1 else b""
        length = sum(len(piece) for piece in self.pieces)
        self.raw_headers = [
            (b"content-type", media_type.encode("latin-1")),
            (b"content-length", str(length).encode()),
            *(
                (name.lower().encode("latin-1"), value.encode("latin-1"))
                for name, value in (headers or {}).items()
            ),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if len(self.pieces) == 1:
            await super().__call__(scope, receive, send)
            return
        start = {"type": "http.response.start", "status": self.status_code}
        await send({**start, "headers": self.raw_headers})
        last = len(self.pieces) - 1
        for index, piece in enumerate(self.pieces):
            await send({"type": "http.response.body", "body": piece, "more_body": index < last})
