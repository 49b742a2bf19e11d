"""Raw JSON-RPC over HTTP for the server tests: live servers, calls, SSE streams, builders."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from accord import Agent, create_app
from accord.types import new_id
from agents_for_tests import SAFETY_TIMEOUT
from live_server import serve_app

JSON_HEADERS = {"Content-Type": "application/json"}

Json = dict[str, Any]


def user_message(
    text: str,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    **extra: Any,
) -> Json:
    """A user message as it appears on the wire."""
    message: Json = {
        "kind": "message",
        "messageId": new_id(),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        **extra,
    }
    if task_id is not None:
        message["taskId"] = task_id
    if context_id is not None:
        message["contextId"] = context_id
    return message


def send_params(
    text: str,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    configuration: Json | None = None,
    **message_extra: Any,
) -> Json:
    """`MessageSendParams` carrying one user text message."""
    params: Json = {
        "message": user_message(text, task_id=task_id, context_id=context_id, **message_extra)
    }
    if configuration is not None:
        params["configuration"] = configuration
    return params


def request(method: str, params: Any = None, request_id: Any = 1) -> Json:
    """A JSON-RPC request object (no `params` member when `params` is None)."""
    call: Json = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        call["params"] = params
    return call


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: its `id:` line (if any) and its data parsed as JSON."""

    id: int | None
    data: Json

    @property
    def result(self) -> Json:
        assert "error" not in self.data, f"stream carried an error: {self.data['error']}"
        result: Json = self.data["result"]
        return result


class SseStream:
    """The events of a streaming response, read as they arrive."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._events = self._parse()

    async def _parse(self) -> AsyncIterator[SseEvent]:
        fields: dict[str, list[str]] = {}
        async for line in self.response.aiter_lines():
            if line.startswith(":"):
                continue
            if line:
                name, _, value = line.partition(":")
                fields.setdefault(name, []).append(value.removeprefix(" "))
                continue
            if "data" in fields:
                event_id = fields.get("id", [None])[-1]
                data = json.loads("\n".join(fields["data"]))
                yield SseEvent(int(event_id) if event_id is not None else None, data)
            fields = {}

    def __aiter__(self) -> AsyncIterator[SseEvent]:
        return self._events

    async def next(self) -> SseEvent:
        """The next event; fails when the stream ended instead."""
        try:
            return await anext(self._events)
        except StopAsyncIteration:
            raise AssertionError("the stream ended before the expected event") from None

    async def rest(self) -> list[SseEvent]:
        """Every remaining event, until the server closes the stream."""
        return [event async for event in self._events]


class RpcClient:
    """Speaks raw JSON-RPC to one live server."""

    def __init__(self, http: httpx.AsyncClient, base_url: str) -> None:
        self.http = http
        self.base_url = base_url

    async def post(
        self, body: bytes | str | Any, *, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        """POST `body` to the JSON-RPC endpoint (objects are JSON-encoded), no checks."""
        content = body if isinstance(body, bytes | str) else json.dumps(body)
        return await self.http.post("/", content=content, headers=headers or JSON_HEADERS)

    async def call(self, method: str, params: Any = None, *, request_id: Any = 1) -> Json:
        """Call `method` and return the JSON-RPC response object (checked to be well formed)."""
        response = await self.post(request(method, params, request_id))
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/json")
        body: Json = response.json()
        assert body["jsonrpc"] == "2.0"
        assert ("result" in body) != ("error" in body), body
        return body

    async def result(self, method: str, params: Any = None, *, request_id: Any = 1) -> Any:
        """The result of a call that must succeed."""
        body = await self.call(method, params, request_id=request_id)
        assert "error" not in body, body["error"]
        assert body["id"] == request_id
        return body["result"]

    async def error(self, method: str, params: Any = None, *, request_id: Any = 1) -> Json:
        """The error object of a call that must fail."""
        body = await self.call(method, params, request_id=request_id)
        assert "error" in body, f"expected an error, got {body['result']}"
        assert body["id"] == request_id
        error: Json = body["error"]
        assert isinstance(error["code"], int) and isinstance(error["message"], str)
        return error

    async def send(self, text: str, **kwargs: Any) -> Json:
        """message/send of one text message; the result (Task or Message)."""
        result: Json = await self.result("message/send", send_params(text, **kwargs))
        return result

    async def get_task(self, task_id: str, **params: Any) -> Json:
        result: Json = await self.result("tasks/get", {"id": task_id, **params})
        return result

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        params: Any,
        *,
        request_id: Any = 1,
        headers: dict[str, str] | None = None,
    ) -> AsyncIterator[SseStream]:
        """Open a streaming call (with extra `headers`); it must answer with an SSE stream."""
        body = json.dumps(request(method, params, request_id))
        headers = {**JSON_HEADERS, **(headers or {})}
        async with self.http.stream("POST", "/", content=body, headers=headers) as response:
            assert response.status_code == 200
            if not response.headers["content-type"].startswith("text/event-stream"):
                await response.aread()
                raise AssertionError(f"expected an SSE stream, got {response.text}")
            yield SseStream(response)


class _Watched:
    """Wraps an ASGI app and keeps every exception that escapes it (the server would log it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.errors: list[BaseException] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except Exception as exc:
            self.errors.append(exc)
            raise


@contextmanager
def served(app: ASGIApp, **options: Any) -> Iterator[str]:
    """Serve `app` on loopback (`options` go to uvicorn); yields its base URL. Fails if the app
    raised anything unhandled."""
    watched = _Watched(app)
    with serve_app(watched, **options) as base_url:
        yield base_url
    assert not watched.errors, f"the app raised: {watched.errors!r}"


@asynccontextmanager
async def connect(base_url: str) -> AsyncIterator[RpcClient]:
    """A JSON-RPC client of the server at `base_url`."""
    async with httpx.AsyncClient(base_url=base_url, timeout=SAFETY_TIMEOUT) as http:
        yield RpcClient(http, base_url)


@asynccontextmanager
async def live(target: Agent | Starlette, **options: Any) -> AsyncIterator[RpcClient]:
    """Serve an agent (with `create_app` options) or a ready app, and talk JSON-RPC to it."""
    app = create_app(target, **options) if isinstance(target, Agent) else target
    with served(app) as base_url:
        async with connect(base_url) as client:
            yield client


def text_of(obj: Json) -> str:
    """The text parts of a wire message or artifact, joined by newlines."""
    return "\n".join(part["text"] for part in obj["parts"] if part["kind"] == "text")
