"""RestBinding: A2A over HTTP+JSON — the 1.0 routes (also under `/{tenant}`), 0.3's under `/v1`."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

from pydantic_core import from_json
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from accord.codecs import VERSION_HEADER
from accord.codecs.rest import (
    JSON_MEDIA_TYPES,
    RestCodec,
    RestRoute,
    http_status,
    status_body,
)
from accord.codecs.rest_v0_3 import REST_V0_3
from accord.codecs.rest_v1_0 import REST_V1_0
from accord.core import Inbound
from accord.core.inbound import tenant_field
from accord.core.records import opened_stream
from accord.errors import (
    A2AError,
    InvalidRequest,
    MethodNotAllowed,
    MethodNotFound,
    ParseError,
)
from accord.server.body_budget import BodyBudget
from accord.server.http_request import (
    DEFAULT_MAX_BODY_BYTES,
    JSON,
    IndexedRequest,
    JsonResponse,
    check_content_type,
    error_headers,
    peer_address,
    query_of,
    read_body,
)
from accord.server.pipeline import RequestPipeline, Target
from accord.server.sse import record_frames, sse_event, sse_response
from accord.server.tls import client_certificate

log = logging.getLogger("accord.server")

REST_CODECS = (REST_V0_3, REST_V1_0)
"""The HTTP+JSON versions served, 0.3 first: a `/v1/...` path is a 0.3 route, never a tenant."""

_RESERVED_TENANTS = frozenset(codec.prefix.strip("/") for codec in REST_CODECS if codec.prefix)


class _Segment(Convertor[str]):
    """One path segment without `:`, so `GET /tasks/x:cancel` is not GetTask of `x:cancel`."""

    regex = "[^/:]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


_SEGMENT = "a2a_segment"
register_url_convertor(_SEGMENT, _Segment())


class RestBinding:
    """The Starlette routes answering A2A over HTTP+JSON, in every version, for one service.

    The path says which version a request is (see docs/versions.md); the service behind it
    is the same as JSON-RPC's.
    """

    def __init__(
        self,
        pipeline: RequestPipeline,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        body_budget: BodyBudget | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.max_body_bytes = max_body_bytes
        self.body_budget = body_budget

    def routes(self) -> list[Route]:
        """One Starlette route per path (its verbs together, so a wrong verb is a clean 405)."""
        routes: list[Route] = []
        for codec in REST_CODECS:
            prefixes = [codec.prefix]
            if codec.tenants:
                prefixes.append(codec.prefix + "/{tenant}")
            for prefix in prefixes:  # every untenanted path first: `/tasks/x` is not a tenant
                by_path: dict[str, dict[str, RestRoute]] = {}
                for route in codec.routes:
                    for verb in route.verbs:
                        by_path.setdefault(route.path, {})[verb] = route
                for path, by_verb in by_path.items():
                    endpoint = self._endpoint(codec, by_verb)
                    routes.append(
                        Route(_starlette_path(prefix + path), endpoint, methods=[*by_verb])
                    )
        return routes

    def _endpoint(self, codec: RestCodec, by_verb: Mapping[str, RestRoute]) -> _PathApp:
        targets = {
            verb: Target(
                route.method,
                codec.version,
                kind="route",
                hint=codec.hint,
                label=f"{route.name} request",
            )
            for verb, route in by_verb.items()
        }
        return _PathApp(self, codec, by_verb, targets)

    async def serve(
        self, request: Request, codec: RestCodec, route: RestRoute, target: Target
    ) -> Response:
        """The answer to `request` on `route` (errors included: it never raises)."""
        try:
            path = dict(request.path_params)
            tenant = path.pop("tenant", None)
            if tenant in _RESERVED_TENANTS:
                raise MethodNotFound(
                    f"there is no A2A route {request.method} {request.url.path}; /{tenant}/ "
                    "holds the A2A 0.3 routes (a tenant cannot be named so)"
                )
            fields = {**await self._fields(request), **path}
            inbound = Inbound(
                "HTTP+JSON",
                f"{request.method} {codec.prefix}{route.path}",
                request.headers,
                query_of(request),
                peer=peer_address(request.scope),
                certificate=client_certificate(request.scope),
                tenant=tenant or tenant_field(fields),
            )
            reply = await self.pipeline.run(
                inbound, target, fields, base_url=lambda: str(request.base_url)
            )
            if reply.error is not None:
                raise reply.error
            if reply.records is None:
                assert reply.body is not None
                return JsonResponse(reply.body, 200, reply.headers, codec.media_type)
            records = await opened_stream(reply.records)
        except A2AError as exc:
            return _error_response(exc, codec)
        except ClientDisconnect:
            return Response(status_code=400)
        except Exception as exc:
            error = self.pipeline.internal_error(exc, "serving an HTTP+JSON request")
            return _error_response(error, codec)
        frames = record_frames(records, route.method.encode, partial(_error_event, codec=codec))
        return sse_response(frames, reply.headers)

    async def _fields(self, request: Request) -> dict[str, Any]:
        """The request's fields: its query parameters (GET, DELETE) or its JSON body (POST)."""
        if request.method in ("GET", "HEAD", "DELETE"):
            query = query_of(request)
            return {k: v for k, v in query.items() if v and k != VERSION_HEADER}
        if "content-type" in request.headers:  # refused before its body is read
            check_content_type(request, JSON_MEDIA_TYPES)
        body = await read_body(request, self.max_body_bytes, self.body_budget)
        if not body.strip():
            return {}  # an empty body (typed JSON or untyped) is an empty request message
        check_content_type(request, JSON_MEDIA_TYPES)  # a body needs a declared JSON type
        try:
            fields = from_json(body)
        except ValueError as exc:
            raise ParseError(f"request body is not valid JSON: {exc}") from None
        if not isinstance(fields, dict):
            raise InvalidRequest("the request body must be a JSON object")
        return fields


class _PathApp:
    """The ASGI app of one HTTP+JSON path, each verb served as its route says.

    An app rather than a request function: Starlette would wrap each call of one in a
    request of its own and a per-route exception handler, where `serve` answers every error
    itself (what escapes still meets the app's handlers outside).
    """

    def __init__(
        self,
        binding: RestBinding,
        codec: RestCodec,
        by_verb: Mapping[str, RestRoute],
        targets: Mapping[str, Target],
    ) -> None:
        self.binding = binding
        self.codec = codec
        self.by_verb = by_verb
        self.targets = targets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = IndexedRequest(scope, receive, send)
        verb = "GET" if request.method == "HEAD" else request.method
        route, target = self.by_verb[verb], self.targets[verb]
        response = await self.binding.serve(request, self.codec, route, target)
        await response(scope, receive, send)


def _starlette_path(template: str) -> str:
    """A route template with each plain `{field}` limited to a segment without `:`."""
    return _PLAIN_FIELD.sub(r"{\1:" + _SEGMENT + "}", template)


_PLAIN_FIELD = re.compile(r"\{(\w+)\}")


def _error_event(error: A2AError, codec: RestCodec) -> bytes:
    """The last event of a stream that fails after it started: its `google.rpc.Status`."""
    return sse_event(status_body(error, *http_status(error), codec), event="error")


def _error_response(
    error: A2AError,
    codec: RestCodec | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """`error` as an HTTP status with a `google.rpc.Status` body (shaped as `codec`, the
    version of the route, says; plain JSON when no route was found)."""
    http, status = http_status(error)
    all_headers = {
        **(headers or {}),
        **({VERSION_HEADER: codec.version} if codec else {}),
        **error_headers(error),
    }
    media_type = codec.media_type if codec else JSON
    return Response(status_body(error, http, status, codec), http, all_headers, media_type)


async def _not_found(request: Request, exc: Exception) -> Response:
    return _error_response(
        MethodNotFound(
            f"there is no A2A route {request.method} {request.url.path} (the HTTP+JSON routes"
            " are in A2A 1.0, section 11; the 0.3 ones start with /v1/)"
        )
    )


async def _not_allowed(request: Request, exc: Exception) -> Response:
    headers = exc.headers if isinstance(exc, HTTPException) and exc.headers else {}
    allowed = headers.get("Allow", "")
    return _error_response(
        MethodNotAllowed(f"{request.url.path} does not take {request.method}; use {allowed}"),
        headers=headers,
    )


HTTP_ERROR_HANDLERS: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    404: _not_found,
    405: _not_allowed,
}
"""Starlette exception handlers giving unknown paths and wrong verbs a `google.rpc.Status`."""
