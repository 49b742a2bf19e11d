"""`accord host`: serve the multi-agent host, knowing the agents given from the start."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from accord.agents.agent import DEFAULT_PORT
from accord.cli import serve as serving
from accord.cli import serve_options
from accord.cli.errors import reports_errors
from accord.cli.storage import StoreSettings
from accord.host.registry import (
    AGENTS_VARIABLE,
    DEFAULT_REGISTRY_PATH,
    REGISTRY_VARIABLE,
    initial_urls,
)
from accord.store import DEFAULT_STORE_URL


@reports_errors
def host(
    agents: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            metavar="URL",
            help=f"A remote agent's card or base URL to know from the start (repeatable; also"
            f" {AGENTS_VARIABLE}, comma-separated).",
            show_default=False,
        ),
    ] = None,
    registry: Annotated[
        Path,
        typer.Option(
            metavar="PATH", envvar=REGISTRY_VARIABLE, help="The file the known agents are kept in."
        ),
    ] = DEFAULT_REGISTRY_PATH,
    host: Annotated[
        str, typer.Option(metavar="HOST", help="Interface to listen on.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(metavar="PORT", help="Port to listen on.")] = DEFAULT_PORT,
    log_level: Annotated[str, typer.Option(metavar="LEVEL", help="uvicorn's log level.")] = "info",
    store: Annotated[
        str,
        typer.Option(
            metavar="URL",
            envvar="ACCORD_STORE",
            help="Where the host's own tasks live (see serve).",
        ),
    ] = DEFAULT_STORE_URL,
    public_url: serve_options.PublicUrlOption = None,
    allowed_host: serve_options.AllowedHostOption = None,
) -> None:
    """Serve the multi-agent host.

    It delegates each request to the agents whose skills fit. Manage its agents at
    /host/agents (GET lists, POST {"url": ...} adds, DELETE ?url= removes).
    """
    from accord.host import host_agent

    public_url = serve_options.public_url(public_url)  # checked before saying anything
    serve_options.allowed_hosts(allowed_host)
    known = [*initial_urls(), *(agents or [])]
    typer.echo(f"accord host: the agents it knows are kept in {registry}", err=True)
    agent = host_agent(registry, known)
    serving.run(
        agent,
        host,
        port,
        log_level,
        StoreSettings(url=store),
        public_url=public_url,
        allowed_hosts=allowed_host,
    )


def register(app: typer.Typer) -> None:
    """Add `accord host` to the `accord` command."""
    app.command("host")(host)
