"""Running the bridge's MCP server: over stdio (a client starts it) or streamable HTTP."""

from __future__ import annotations

import socket
import sys
from collections.abc import Mapping
from typing import Any

import uvicorn
from mcp.server.stdio import stdio_server

from accord.mcp.bridge import AgentBridge

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
    server_options: Mapping[str, Any] | None = None,
) -> None:
    """Offer the bridge's agents over streamable HTTP at `http://host:port/mcp`, until
    interrupted; `server_options` are more of `uvicorn.Config`'s (`HttpLimits`', say). The
    endpoint asks its callers for no credentials while it presents the agents' with each
    call: keep it on loopback (`accord mcp serve` does)."""
    app = bridge.server().streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", **(server_options or {})
    )
    shown = f"[{host}]" if ":" in host else host
    names = ", ".join(card.name for card in bridge.cards)
    announce = f"serving {names} over MCP at http://{shown}:{port}{MCP_PATH}"
    await _AnnouncingServer(config, announce).serve()


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's server, saying on stderr where it serves once it listens."""

    def __init__(self, config: uvicorn.Config, announcement: str) -> None:
        super().__init__(config)
        self.announcement = announcement

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(self.announcement, file=sys.stderr, flush=True)
