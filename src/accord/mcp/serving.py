"""Running the bridge's MCP server: over stdio (a client starts it) or streamable HTTP."""

from __future__ import annotations

import socket
import sys
from collections.abc import Mapping
from typing import Any

import uvicorn
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp, Receive, Scope, Send

from accord.mcp.bridge import AgentBridge
from accord.web.bearer import bearer_token, same_secret

MCP_PATH = "/mcp"


async def serve_stdio(bridge: AgentBridge) -> None:
    """Offer the bridge's agents to the MCP client on stdin and stdout, until it leaves."""
    server = bridge.server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(
    bridge: AgentBridge,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    server_options: Mapping[str, Any] | None = None,
) -> None:
    """Offer the bridge's agents over streamable HTTP at `http://host:port/mcp`, until
    interrupted; `server_options` are more of `uvicorn.Config`'s (`HttpLimits`', say).

    The endpoint presents the agents' credentials with each call. With `token`, only
    requests carrying it (`Authorization: Bearer <token>`) get in; without, anyone who can
    connect calls the agents as you (`accord mcp serve` gives one beyond loopback)."""
    app: ASGIApp = bridge.server().streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    if token is not None:
        app = BearerGate(app, token)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", **(server_options or {})
    )
    shown = f"[{host}]" if ":" in host else host
    names = ", ".join(card.name for card in bridge.cards)
    announce = f"serving {names} over MCP at http://{shown}:{port}{MCP_PATH}"
    await _AnnouncingServer(config, announce).serve()


class BearerGate:
    """Lets through only the HTTP requests that carry `Authorization: Bearer <token>`; the
    others are answered 401, naming the scheme (RFC 6750)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("a bearer token cannot be empty")
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._carries_token(scope):
            await _unauthorized(send)
            return
        await self.app(scope, receive, send)

    def _carries_token(self, scope: Scope) -> bool:
        for name, value in scope["headers"]:
            if name == b"authorization":
                given = bearer_token(value.decode("latin-1"))
                return given is not None and same_secret(given, self.token)
        return False


_REFUSAL = b'{"error":"invalid_token","error_description":"this endpoint needs its bearer token"}'


async def _unauthorized(send: Send) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(_REFUSAL)).encode()),
        (b"www-authenticate", b'Bearer error="invalid_token"'),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": _REFUSAL})


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's server, saying on stderr where it serves once it listens."""

    def __init__(self, config: uvicorn.Config, announcement: str) -> None:
        super().__init__(config)
        self.announcement = announcement

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(self.announcement, file=sys.stderr, flush=True)
