"""JsonRpcTransport: JSON-RPC calls over HTTP POST, with SSE for the streaming methods."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any, TypeVar

import httpx
from httpx_sse import EventSource
from pydantic import TypeAdapter

from accord.client.failures import http_errors
from accord.client.rpc import decode_response, encode_request, is_response
from accord.errors import A2AClientError
from accord.types import A2AModel

T = TypeVar("T")

JSON = "application/json"
EVENT_STREAM = "text/event-stream"
LAST_EVENT_ID = "Last-Event-ID"


class JsonRpcTransport:
    """Sends JSON-RPC calls with an httpx client; request ids are increasing integers."""

    def __init__(self, http: httpx.AsyncClient, headers: Mapping[str, str] | None = None) -> None:
        self._http = http
        self._headers = dict(headers or {})
        self._ids = itertools.count(1)

    async def call(
        self, url: str, method: str, params: A2AModel | None, result: TypeAdapter[T]
    ) -> T:
        """Call `method` and return its typed result."""
        request_id = next(self._ids)
        with http_errors("POST", url):
            response = await self._http.post(
                url,
                content=encode_request(request_id, method, params),
                headers=self._request_headers(accept=JSON),
            )
        return decode_response(_response_document(response, url), result, request_id)

    async def stream(
        self,
        url: str,
        method: str,
        params: A2AModel | None,
        event: TypeAdapter[T],
        *,
        last_event_id: int | None = None,
    ) -> AsyncGenerator[tuple[T, int | None], None]:
        """Call a streaming `method`; yield each typed event with the stream's last event id.

        The id is the last `id:` the server sent so far (None before any), the number to
        resume from. `last_event_id` goes out as the `Last-Event-ID` header. An error before
        the stream starts comes back as a plain JSON-RPC response and is raised.
        """
        request_id = next(self._ids)
        headers = self._request_headers(accept=EVENT_STREAM)
        if last_event_id is not None:
            headers[LAST_EVENT_ID] = str(last_event_id)
        with http_errors("POST", url):
            async with self._http.stream(
                "POST",
                url,
                content=encode_request(request_id, method, params),
                headers=headers,
            ) as response:
                if not _is_event_stream(response):
                    await response.aread()
                    document = _response_document(response, url)
                    yield decode_response(document, event, request_id), None
                    return
                async for sse in EventSource(response).aiter_sse():
                    if sse.data:
                        document = _event_document(sse.data, url)
                        yield decode_response(document, event, request_id), _event_id(sse.id)

    def _request_headers(self, *, accept: str) -> dict[str, str]:
        return {**self._headers, "Content-Type": JSON, "Accept": accept}


def _is_event_stream(response: httpx.Response) -> bool:
    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    return response.status_code == 200 and content_type == EVENT_STREAM


def _response_document(response: httpx.Response, url: str) -> Any:
    """The JSON-RPC response in an HTTP response (whatever its status, e.g. 413 with an error)."""
    try:
        document = json.loads(response.content)
    except ValueError:
        document = None
    if is_response(document):
        return document
    if response.status_code != 200:
        raise A2AClientError(
            f"POST {url} answered HTTP {response.status_code} without a JSON-RPC response",
            status_code=response.status_code,
        )
    raise A2AClientError(f"POST {url} answered with a body that is not a JSON-RPC response")


def _event_id(value: str) -> int | None:
    """An SSE last event id as accord servers send it (a sequence number); None otherwise."""
    return int(value) if value.isdigit() else None


def _event_document(data: str, url: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise A2AClientError(f"an event from {url} is not JSON: {data[:80]!r}") from None
