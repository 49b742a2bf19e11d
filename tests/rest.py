"""Raw HTTP+JSON for the REST tests: a client of one live server, and google.rpc.Status checks."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from starlette.applications import Starlette

from accord import Agent, create_app
from agents_for_tests import SAFETY_TIMEOUT
from rpc import Json, SseStream, served

A2A_JSON = "application/a2a+json"
MEDIA_TYPES = {"1.0": A2A_JSON, "0.3": "application/json"}
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"


class RestClient:
    """Speaks raw HTTP+JSON to one live server, in the version whose responses it expects."""

    def __init__(self, http: httpx.AsyncClient, version: str) -> None:
        self.http = http
        self.version = version
        self.media_type = MEDIA_TYPES[version]

    async def request(
        self,
        verb: str,
        path: str,
        body: Any = None,
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request (a JSON `body` unless None), no checks."""
        content = None if body is None else json.dumps(body)
        sent = {"Content-Type": A2A_JSON} if body is not None else {}
        return await self.http.request(
            verb, path, content=content, params=params, headers={**sent, **(headers or {})}
        )

    async def ok(self, verb: str, path: str, body: Any = None, **options: Any) -> Any:
        """The JSON of a response that must be 200, typed as this version types it."""
        response = await self.request(verb, path, body, **options)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == self.media_type
        assert response.headers["a2a-version"] == self.version
        return response.json()

    async def error(
        self, verb: str, path: str, body: Any = None, *, status: int, **options: Any
    ) -> Json:
        """The `error` of a response that must be the HTTP `status` with a Status body."""
        response = await self.request(verb, path, body, **options)
        return status_error(response, status, self.media_type)

    @asynccontextmanager
    async def stream(
        self, verb: str, path: str, body: Any = None, *, headers: dict[str, str] | None = None
    ) -> AsyncIterator[SseStream]:
        """Open a streaming route; it must answer 200 with an SSE stream."""
        content = None if body is None else json.dumps(body)
        sent = {"Content-Type": A2A_JSON} if body is not None else {}
        async with self.http.stream(
            verb, path, content=content, headers={**sent, **(headers or {})}
        ) as response:
            if response.status_code != 200 or not response.headers["content-type"].startswith(
                "text/event-stream"
            ):
                await response.aread()
                raise AssertionError(
                    f"expected an SSE stream, got {response.status_code}: {response.text}"
                )
            assert response.headers["a2a-version"] == self.version
            yield SseStream(response)


def status_error(response: httpx.Response, status: int, media_type: str | None = None) -> Json:
    """The `error` of a `google.rpc.Status` response, checked to be well formed."""
    assert response.status_code == status, response.text
    if media_type is not None:
        assert response.headers["content-type"] == media_type
    body = response.json()
    error: Json = body["error"]
    if media_type == A2A_JSON or set(body) == {"error"}:  # 1.0 routes, and paths of no route
        assert list(body) == ["error"], body
    else:  # 0.3 routes: what 0.3 clients read, beside the Status
        assert list(body) == ["error", "code", "message", "type"], body
        assert isinstance(body["code"], int) and body["message"] == error["message"]
        assert body["type"].endswith("Error"), body
    assert error["code"] == status
    assert isinstance(error["status"], str) and error["status"].isupper()
    assert isinstance(error["message"], str) and error["message"]
    assert all(isinstance(detail["@type"], str) for detail in error["details"])
    return error


def reason(error: Json) -> str | None:
    """The reason of the error's one google.rpc.ErrorInfo (None when it has none)."""
    infos = [d for d in error["details"] if d["@type"] == ERROR_INFO]
    if not infos:
        return None
    (info,) = infos
    assert info["domain"] == "a2a-protocol.org"
    found: str = info["reason"]
    return found


def violations(error: Json) -> list[str]:
    """The fields of the error's google.rpc.BadRequest."""
    (bad_request,) = [d for d in error["details"] if d["@type"] == BAD_REQUEST]
    return [v["field"] for v in bad_request["fieldViolations"]]


@asynccontextmanager
async def connect_rest(
    base_url: str, version: str = "1.0", *, header: str | None = None
) -> AsyncIterator[RestClient]:
    """A client of `base_url` expecting `version`, sending `A2A-Version: header` (default:
    `version`; empty: none at all)."""
    named = version if header is None else header
    headers = {"A2A-Version": named} if named else {}
    async with httpx.AsyncClient(
        base_url=base_url, timeout=SAFETY_TIMEOUT, headers=headers
    ) as http:
        yield RestClient(http, version)


@asynccontextmanager
async def live_rest(
    target: Agent | Starlette, version: str = "1.0", **options: Any
) -> AsyncIterator[RestClient]:
    """Serve an agent (with `create_app` options) or an app; talk HTTP+JSON `version` to it."""
    app = create_app(target, **options) if isinstance(target, Agent) else target
    with served(app) as base_url:
        async with connect_rest(base_url, version) as client:
            yield client
