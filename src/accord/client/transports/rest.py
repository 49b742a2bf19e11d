"""RestTransport: HTTP+JSON calls on the routes of a version, with SSE for the streaming ones."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

import httpx
from httpx_sse import EventSource

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
from accord.codecs.rest import RestCodec, RestRequest, error_from_body, rest_request
from accord.errors import A2AClientError
from accord.types import AgentInterface, StreamEvent

P = TypeVar("P")
R = TypeVar("R")


class RestTransport(Transport):
    """Calls the routes of `routes` below the interface's URL, their prefix (0.3's `/v1`) and
    the interface's tenant, if it has one."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        interface: AgentInterface,
        codec: ClientCodec[Any],
        routes: RestCodec,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(http, interface, codec, headers)
        self._routes = routes
        base = interface.url.rstrip("/")
        if not base.endswith(routes.prefix):  # 0.3's `/v1` is the routes', not the card's
            base += routes.prefix
        tenant = f"/{interface.tenant}" if interface.tenant and routes.tenants else ""
        self._base = base + tenant

    async def call(self, call: ClientCall[P, R], params: P) -> R:
        request, url = self._request(call, params)
        with http_errors(request.verb, url):
            answer = await fetch(
                self._http,
                request.verb,
                _target(url, request.query),
                content=_json_content(request.body),
                headers=self._request_headers(accept=JSON),
            )
        note_activated(answer.headers)
        if not answer.is_success:  # 201 Created and 204 No Content are answers too
            raise _error(answer, request.verb, url)
        # No body is the empty ProtoJSON message: nothing to delete, no configs to list.
        return decoded(call.decode, json_body(answer.content) if answer.content else {})

    async def stream(
        self, call: ClientCall[P, StreamEvent], params: P, last_event_id: int | None = None
    ) -> IdentifiedEvents:
        request, url = self._request(call, params)
        headers = self._request_headers(accept=EVENT_STREAM, last_event_id=last_event_id)
        with http_errors(request.verb, url):
            async with streamed(
                self._http,
                request.verb,
                _target(url, request.query),
                content=_json_content(request.body),
                headers=headers,
            ) as response:
                note_activated(response.headers)
                if not is_event_stream(response):
                    await response.aread()
                    raise _error(answer_of(response), request.verb, url)
                async for sse in EventSource(response).aiter_sse():
                    if not sse.data:
                        continue
                    document = event_document(sse, url)
                    if sse.event == "error":
                        raise error_from_body(document, 500) or A2AClientError(
                            f"the stream from {url} ended with an error: {sse.data[:200]}"
                        )
                    yield decoded(call.decode, document), event_id(sse)

    def _request(self, call: ClientCall[P, Any], params: P) -> tuple[RestRequest, str]:
        request = rest_request(self._routes.route(call.name), call.encode(params))
        return request, self._base + request.path


def _target(url: str, query: dict[str, str]) -> httpx.URL:
    parsed = parsed_url(url)
    return parsed.copy_merge_params(query) if query else parsed


def _json_content(body: dict[str, Any] | None) -> bytes | None:
    """A request's JSON body, encoded as httpx encodes `json=`."""
    if body is None:
        return None
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _error(answer: Answer, verb: str, url: str) -> Exception:
    """The A2AError of an error response's body, else an A2AClientError."""
    error = error_from_body(json_body(answer.content), answer.status_code)
    if error is not None:
        return waiting_as_told(error, answer)
    refused = auth_refusal(answer, f"{verb} {url}")
    if refused is not None:
        return refused
    return A2AClientError(
        f"{verb} {url} answered HTTP {answer.status_code} without an A2A error",
        status_code=answer.status_code,
    )
