"""JsonRpcTransport: JSON-RPC calls over HTTP POST, with SSE for the streaming methods."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any, TypeVar

import httpx
import pydantic_core
from httpx_sse import EventSource
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from accord.client.activated import note_activated
from accord.client.direct import fetch, streamed
from accord.client.failures import http_errors
from accord.client.keepalive import Answer, answer_of
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
from accord.types import A2AModel, AgentInterface, JsonRpcId, StreamEvent

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
            answer = await fetch(
                self._http,
                "POST",
                parsed_url(self.url),
                content=self._request(request_id, call, params),
                headers=self._request_headers(accept=JSON),
            )
        note_activated(answer.headers)
        try:
            return self._result(_response_document(answer, self.url), call, request_id)
        except RateLimited as exc:
            raise waiting_as_told(exc, answer) from None

    async def stream(
        self, call: ClientCall[P, StreamEvent], params: P, last_event_id: int | None = None
    ) -> IdentifiedEvents:
        # An error before the stream starts comes back as a plain JSON-RPC response.
        request_id = next(self._ids)
        headers = self._request_headers(accept=EVENT_STREAM, last_event_id=last_event_id)
        content = self._request(request_id, call, params)
        with http_errors("POST", self.url):
            async with streamed(
                self._http, "POST", parsed_url(self.url), content=content, headers=headers
            ) as response:
                note_activated(response.headers)
                if not is_event_stream(response):
                    await response.aread()
                    answer = answer_of(response)
                    document = _response_document(answer, self.url)
                    try:
                        result = self._result(document, call, request_id)
                    except RateLimited as exc:
                        raise waiting_as_told(exc, answer) from None
                    yield result, None
                    return
                async for sse in EventSource(response).aiter_sse():
                    if sse.data:
                        document = event_document(sse, self.url)
                        yield self._result(document, call, request_id), event_id(sse)

    def _request(self, request_id: int, call: ClientCall[P, Any], params: P) -> bytes:
        # JSONRPCRequest(...).to_json()'s bytes, the model neither built nor validated.
        if call.encode is A2AModel.to_wire and isinstance(params, A2AModel):
            written = _written_as_is(request_id, call.name, params)
            if written is not None:
                return written
        fields = call.encode(params)
        request = {"jsonrpc": "2.0", "id": request_id, "method": call.name, "params": fields}
        return pydantic_core.to_json(request, exclude_none=True)

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


def _written_as_is(request_id: int, method: str, params: A2AModel) -> bytes | None:
    """The request whose params are `params.to_wire()`, written from the params' own JSON
    (not through a dict of it), the same bytes; None when they cannot be written (then the
    dict's path raises the error it raises)."""
    try:
        written = params.to_json()
    except PydanticSerializationError:
        return None
    name = pydantic_core.to_json(method)
    return b'{"jsonrpc":"2.0","id":%d,"method":%s,"params":%s}' % (request_id, name, written)


def _is_response(document: Any) -> bool:
    return isinstance(document, dict) and ("result" in document or "error" in document)


def _response_document(answer: Answer, url: str) -> Any:
    """The JSON-RPC response in an HTTP response (whatever its status, e.g. 413 with an error)."""
    document = json_body(answer.content)
    if _is_response(document):
        return document
    refused = auth_refusal(answer, f"POST {url}")
    if refused is not None:
        raise refused
    if answer.status_code != 200:
        raise A2AClientError(
            f"POST {url} answered HTTP {answer.status_code} without a JSON-RPC response",
            status_code=answer.status_code,
        )
    raise A2AClientError(f"POST {url} answered with a body that is not a JSON-RPC response")
