"""JsonRpcTransport: JSON-RPC calls over HTTP POST, with SSE for the streaming methods."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any, TypeVar

import httpx
from httpx_sse import EventSource
from pydantic import ValidationError

from accord.client.activated import note_activated
from accord.client.failures import http_errors
from accord.client.transports.base import (
    EVENT_STREAM,
    JSON,
    IdentifiedEvents,
    Transport,
    auth_refusal,
    decoded,
    event_document,
    event_id,
    is_event_stream,
    json_body,
    parsed_url,
    waiting_as_told,
)
from accord.codecs.base import ClientCall, ClientCodec
from accord.errors import A2AClientError, RateLimited
from accord.types import AgentInterface, JsonRpcId, JSONRPCRequest, StreamEvent

P = TypeVar("P")
R = TypeVar("R")


class JsonRpcTransport(Transport):
    """Sends JSON-RPC calls to the interface's URL; request ids are increasing integers."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        interface: AgentInterface,
        codec: ClientCodec[Any],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(http, interface, codec, headers)
        self._ids = itertools.count(1)

    async def call(self, call: ClientCall[P, R], params: P) -> R:
        request_id = next(self._ids)
        with http_errors("POST", self.url):
            response = await self._http.post(
                parsed_url(self.url),
                content=self._request(request_id, call, params),
                headers=self._request_headers(accept=JSON),
            )
        note_activated(response.headers)
        try:
            return self._result(_response_document(response, self.url), call, request_id)
        except RateLimited as exc:
            raise waiting_as_told(exc, response) from None

    async def stream(
        self, call: ClientCall[P, StreamEvent], params: P, last_event_id: int | None = None
    ) -> IdentifiedEvents:
        # An error before the stream starts comes back as a plain JSON-RPC response.
        request_id = next(self._ids)
        headers = self._request_headers(accept=EVENT_STREAM, last_event_id=last_event_id)
        content = self._request(request_id, call, params)
        with http_errors("POST", self.url):
            async with self._http.stream(
                "POST", parsed_url(self.url), content=content, headers=headers
            ) as response:
                note_activated(response.headers)
                if not is_event_stream(response):
                    await response.aread()
                    document = _response_document(response, self.url)
                    try:
                        result = self._result(document, call, request_id)
                    except RateLimited as exc:
                        raise waiting_as_told(exc, response) from None
                    yield result, None
                    return
                async for sse in EventSource(response).aiter_sse():
                    if sse.data:
                        document = event_document(sse, self.url)
                        yield self._result(document, call, request_id), event_id(sse)

    def _request(self, request_id: int, call: ClientCall[P, Any], params: P) -> bytes:
        fields = call.encode(params)
        return JSONRPCRequest(id=request_id, method=call.name, params=fields).to_json()

    def _result(self, document: Any, call: ClientCall[Any, R], request_id: JsonRpcId) -> R:
        """The decoded result of a JSON-RPC response; raises the A2AError it carries instead."""
        if "error" in document:
            try:
                error: Exception = self.codec.error(document["error"])
            except ValidationError:
                text = json.dumps(document["error"])[:200]
                error = A2AClientError(f"malformed JSON-RPC error object: {text}")
            raise error
        if document.get("id") != request_id:
            raise A2AClientError(
                f"the answer is for request id {document.get('id')!r}, not {request_id!r}"
            )
        return decoded(call.decode, document["result"])


def _is_response(document: Any) -> bool:
    return isinstance(document, dict) and ("result" in document or "error" in document)


def _response_document(response: httpx.Response, url: str) -> Any:
    """The JSON-RPC response in an HTTP response (whatever its status, e.g. 413 with an error)."""
    document = json_body(response.content)
    if _is_response(document):
        return document
    refused = auth_refusal(response, f"POST {url}")
    if refused is not None:
        raise refused
    if response.status_code != 200:
        raise A2AClientError(
            f"POST {url} answered HTTP {response.status_code} without a JSON-RPC response",
            status_code=response.status_code,
        )
    raise A2AClientError(f"POST {url} answered with a body that is not a JSON-RPC response")
