"""JsonRpcShortcut: hands JSON-RPC POSTs at the root straight to the binding, ahead of routing."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from accord.server.http_request import IndexedRequest
from accord.server.jsonrpc import JsonRpcBinding


class JsonRpcShortcut:
    """ASGI middleware: `POST /` goes to the JSON-RPC binding, everything else on to `app`.

    JSON-RPC is the busiest path of an A2A server and has exactly one route, so it skips the
    router, the per-route exception wrapper and the request/response adapters around them
    (a fifth of a simple request's server time). The binding turns every error into a
    protocol answer itself; Starlette's outer error middleware still sees anything else.
    """

    def __init__(self, app: ASGIApp, binding: JsonRpcBinding) -> None:
        self.app = app
        self.binding = binding

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and _route_path(scope) == "/":
            response = await self.binding.handle(IndexedRequest(scope, receive, send))
            await response(scope, receive, send)
        else:
            await self.app(scope, receive, send)


def _route_path(scope: Scope) -> str:
    """The path below the app's mount point, as Starlette's router matches it."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] or "/" if root and path.startswith(root) else path
