"""`accord host`: serve the multi-agent host, knowing the agents given from the start."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Annotated

import typer

from accord.agents.agent import DEFAULT_PORT
from accord.auth import Bearer, Security
from accord.cli import exposure, serve_options
from accord.cli import serve as serving
from accord.cli.errors import BadArgument, reports_errors
from accord.cli.storage import StoreSettings
from accord.core import Principal
from accord.host.discovered import DISCOVER_VARIABLE
from accord.host.registry import (
    AGENTS_VARIABLE,
    DEFAULT_REGISTRY_PATH,
    REGISTRY_VARIABLE,
    initial_urls,
)
from accord.keys import DEFAULT_KEYS_DIR
from accord.web.bearer import same_secret


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
    port: Annotated[
        int, typer.Option(metavar="PORT", min=0, max=65535, help="Port to listen on.")
    ] = DEFAULT_PORT,
    log_level: Annotated[str, typer.Option(metavar="LEVEL", help="uvicorn's log level.")] = "info",
    store: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            envvar="ACCORD_STORE",
            help="Where the host's own tasks live (see serve; default: its own file in ./.accord).",
            show_default=False,
        ),
    ] = None,
    public_url: serve_options.PublicUrlOption = None,
    allowed_host: serve_options.AllowedHostOption = None,
    fetch_allow: exposure.FetchAllowOption = None,
    discover: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            envvar=DISCOVER_VARIABLE,
            help="Also know the agents a registry search finds: the registry's URL with the"
            " search's query (http://host:port?q=WORDS&tag=TAG).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the multi-agent host.

    It delegates each request to the agents whose skills fit. Manage its agents at
    /host/agents (GET lists, POST {"url": ...} adds, DELETE ?url= removes) with the token
    it prints (or ACCORD_HOST_TOKEN's) as a bearer token.
    """
    from accord.host import host_agent
    from accord.host.curators import CURATOR_SCOPE, TOKEN_VARIABLE

    # checked before saying anything
    config = serve_options.server_config(public_url=public_url, allowed_hosts=allowed_host or None)
    guard = exposure.fetch_guard(host, fetch_allow)
    token = os.environ.get(TOKEN_VARIABLE) or secrets.token_urlsafe(24)
    security = None
    if exposure.beyond_loopback(host):

        def operator(given: str) -> Principal | None:
            if same_secret(given, token):
                return Principal("operator", scopes=frozenset({CURATOR_SCOPE}))
            return None

        security = Security(Bearer(operator, description="the token `accord host` printed"))
    known = [*initial_urls(), *(agents or [])]
    typer.echo(f"accord host: the agents it knows are kept in {registry}", err=True)
    typer.echo(
        f"accord host: add and remove them with Authorization: Bearer {token}"
        " (POST/DELETE /host/agents)",
        err=True,
    )
    if security is not None:
        typer.echo(
            "accord host: listening beyond loopback: every A2A call needs that token too;"
            " agents added over HTTP may not be on loopback or private addresses unless"
            " --fetch-allow names them",
            err=True,
        )
    try:
        agent = host_agent(
            registry, known, token=token, security=security, fetch_guard=guard, discover=discover
        )
    except ValueError as exc:
        raise BadArgument(f"--discover: {exc}") from None
    if discover:
        typer.echo(f"accord host: also knows the agents found by {discover}", err=True)
    storage = StoreSettings(url=store)
    settings = serving.ServeSettings(host, port, log_level, storage, keys_dir=DEFAULT_KEYS_DIR)
    serving.run(agent, settings, config)
