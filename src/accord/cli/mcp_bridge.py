"""`accord mcp serve`: A2A agents offered to MCP clients, over stdio or streamable HTTP."""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from accord.cli import credentials, exposure
from accord.cli.errors import BadArgument, reports_errors
from accord.cli.options import TransportOption, VersionOption
from accord.server.http_limits import HttpLimits

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
        str, typer.Option(metavar="HOST", help="With --http: the loopback address to listen on.")
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
    """
    try:
        from accord.mcp import AgentBridge, serving
    except ImportError as exc:
        raise BadArgument(
            f"the MCP bridge needs the `mcp` extra (pip install 'accord[mcp]'): {exc}"
        ) from None
    if http and exposure.beyond_loopback(host):
        raise BadArgument(
            f"--host {host}: the MCP endpoint asks for no credentials and calls the agents with"
            " yours, so it listens on loopback only"
        )

    async def bridge_agents() -> None:
        connecting = AgentBridge.connect(
            urls, credentials=credentials.given(), transport=transport, version=version
        )
        async with connecting as bridge:
            if http:
                limits = HttpLimits().uvicorn_options()  # as every command serving HTTP
                await serving.serve_http(bridge, host=host, port=port, server_options=limits)
            else:
                await serving.serve_stdio(bridge)

    anyio.run(bridge_agents)
