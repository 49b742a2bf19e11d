"""accord's request and headers build Starlette's objects without their constructors: the
same attributes, the same answers, and the first of repeated headers wins."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request

from accord.server.http_request import IndexedHeaders, IndexedRequest


def _scope(headers: Any) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "POST",
        "path": "/",
        "query_string": b"a=1",
        "headers": headers,
    }


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _send(message: Any) -> None:
    pass


RAW = [(b"content-type", b"application/json"), (b"x-a", b"1"), (b"X-A", b"2")]


def test_a_request_has_every_attribute_starlettes_constructor_sets() -> None:
    """Caught here, not in production, when a Starlette release sets one more."""
    ours = IndexedRequest(_scope(list(RAW)), _receive, _send)
    theirs = Request(_scope(list(RAW)), _receive, _send)
    theirs.headers  # noqa: B018 - made on first use: as IndexedRequest has it from the start
    assert set(vars(ours)) == set(vars(theirs))


def test_headers_have_every_attribute_starlettes_constructor_sets() -> None:
    assert set(vars(IndexedHeaders(_scope(list(RAW))))) - {"_index"} == set(
        vars(Headers(scope=_scope(list(RAW))))
    )


def test_headers_answer_as_starlettes_do() -> None:
    ours, theirs = IndexedHeaders(_scope(tuple(RAW))), Headers(scope=_scope(tuple(RAW)))
    for name in ("content-type", "Content-Type", "x-a", "X-A", "missing"):
        assert ours.get(name) == theirs.get(name)
        assert (name in ours) == (name in theirs)
    assert ours.raw == theirs.raw
    assert ours["x-a"] == "1"  # the first of repeated headers
