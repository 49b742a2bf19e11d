"""The agent's own routes (`Agent(routes=...)`) behind the same authentication as A2A calls."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from pydantic_core import to_json
from starlette.datastructures import Headers, QueryParams
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from accord.codecs.rest import http_status
from accord.core import Inbound
from accord.errors import A2AError
from accord.server.http_request import JSON, error_headers, peer_address
from accord.server.pipeline import Authenticator
from accord.server.tls import client_certificate


def guarded_routes(
    routes: Sequence[BaseRoute], authenticator: Authenticator | None
) -> list[BaseRoute]:
    """Copies of `routes` whose requests `authenticator` must accept first (the routes as they
    are without one); the handler finds the caller as `request.state.principal`."""
    if authenticator is None:
        return list(routes)
    guarded = []
    for route in routes:
        if hasattr(route, "app"):
            route = copy.copy(route)
            route.app = _Guard(route.app, authenticator)
        guarded.append(route)
    return guarded


class _Guard:
    def __init__(self, app: ASGIApp, authenticator: Authenticator) -> None:
        self.app = app
        self.authenticator = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        inbound = Inbound(
            "HTTP",
            f"{scope.get('method', 'GET')} {scope['path']}",
            Headers(scope=scope),
            QueryParams(scope.get("query_string", b"")),
            peer=peer_address(scope),
            certificate=client_certificate(scope),
        )
        try:
            principal = await self.authenticator.authenticate(inbound)
        except A2AError as exc:
            body = to_json({"error": exc.to_error_object().to_wire()})
            status = http_status(exc)[0]
            response = Response(body, status, error_headers(exc), media_type=JSON)
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)
