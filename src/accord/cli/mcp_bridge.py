"""`accord mcp serve`: A2A agents offered to MCP clients, over stdio or streamable HTTP."""

from __future__ import annotations

import os
import secrets
from typing import Annotated

import anyio
import typer

from accord.cli import credentials, exposure
from accord.cli.errors import BadArgument, reports_errors
from accord.cli.options import TransportOption, VersionOption
from accord.server.http_limits import HttpLimits

TOKEN_VARIABLE = "ACCORD_MCP_TOKEN"
"""The bearer token the HTTP endpoint asks of every request (made and printed when it listens
beyond loopback and this is not set)."""

mcp_app = typer.Typer(
    help="Offer A2A agents to MCP clients.",
    no_args_is_help=True,
    add_completion=False,
)


@mcp_app.command("serve")
@reports_errors
def serve(
    urls: Annotated[
        list[str],
        typer.Argument(
            metavar="URL", help="The agents' base URLs or their cards' URLs (one or more)."
        ),
    ],
    http: Annotated[
        bool,
        typer.Option(
            "--http", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio."
        ),
    ] = False,
    host: Annotated[
        str,
        typer.Option(
            metavar="HOST",
            help="With --http: the address to listen on (beyond loopback, every request needs"
            f" a bearer token: {TOKEN_VARIABLE}, else one made and printed).",
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(metavar="PORT", help="With --http: port to listen on.")] = (
        8000
    ),
    transport: TransportOption = None,
    version: VersionOption = None,
) -> None:
    """Offer A2A agents to MCP clients: a tool per skill, cards as resources.

    Over stdio by default (an MCP client starts this command); streamed updates become
    progress notifications, and an agent's question a result naming the taskId to answer
    with. The agents' credentials are the global options' (accord --bearer ... mcp serve).
    Over HTTP, each request needs the bearer token ACCORD_MCP_TOKEN holds, when it is set.
    """
    try:
        from accord.mcp import AgentBridge, serving
    except ImportError as exc:
        raise BadArgument(
            f"the MCP bridge needs the `mcp` extra (pip install 'accord[mcp]'): {exc}"
        ) from None
    token = os.environ.get(TOKEN_VARIABLE) or None
    if http and token is None and exposure.beyond_loopback(host):
        # Whoever reaches the endpoint calls the agents with the credentials given here.
        token = secrets.token_urlsafe(24)
        typer.echo(
            f"accord mcp serve: listening beyond loopback: every request needs"
            f" Authorization: Bearer {token} (or the token {TOKEN_VARIABLE} holds)",
            err=True,
        )

    async def bridge_agents() -> None:
        connecting = AgentBridge.connect(
            urls, credentials=credentials.given(), transport=transport, version=version
        )
        async with connecting as bridge:
            if http:
                limits = HttpLimits().uvicorn_options()  # as every command serving HTTP
                await serving.serve_http(
                    bridge, host=host, port=port, token=token, server_options=limits
                )
            else:
                await serving.serve_stdio(bridge)

    anyio.run(bridge_agents)
