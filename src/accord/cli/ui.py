"""`accord ui`: serve the web UI for the agents named, until interrupted."""

from __future__ import annotations

import os
from typing import Annotated

import typer
import uvicorn

from accord.cli import exposure, serve_options
from accord.cli.errors import BadArgument, reports_errors
from accord.server.http_limits import HttpLimits

AGENTS_VARIABLE = "ACCORD_UI_AGENTS"
TOKEN_VARIABLE = "ACCORD_UI_TOKEN"
HOST_URL_VARIABLE = "ACCORD_UI_HOST_URL"
HOST_TOKEN_VARIABLE = "ACCORD_HOST_TOKEN"
GRACEFUL_SECONDS = 2


@reports_errors
def ui(
    agents: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            metavar="URL",
            help=f"An agent's URL to start with (repeatable; the first is the default one to"
            f" talk to). Also read from {AGENTS_VARIABLE}, comma-separated.",
            show_default=False,
        ),
    ] = None,
    host_url: Annotated[
        str | None,
        typer.Option(
            "--host-url",
            metavar="URL",
            envvar=HOST_URL_VARIABLE,
            help=f"The accord host agents added are registered with (with the token of"
            f" {HOST_TOKEN_VARIABLE}); no other agent is taken for one.",
            show_default=False,
        ),
    ] = None,
    host: Annotated[
        str, typer.Option(metavar="HOST", help="Interface to listen on.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(metavar="PORT", min=0, max=65535, help="Port to listen on.")
    ] = 8080,
    allowed_host: serve_options.AllowedHostOption = None,
    token: Annotated[
        str | None,
        typer.Option(
            metavar="TOKEN",
            envvar=TOKEN_VARIABLE,
            help="Require this token to log in (made and printed when listening beyond"
            " loopback, where one is always required).",
            show_default=False,
        ),
    ] = None,
    fetch_allow: exposure.FetchAllowOption = None,
    registry: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            envvar="ACCORD_UI_REGISTRY",
            help="An accord registry the Agents page shows and searches.",
            show_default=False,
        ),
    ] = None,
    trace_url: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            envvar="ACCORD_TRACE_URL",
            help="A trace viewer's URL with {trace_id} in it: a task's page links its trace.",
            show_default=False,
        ),
    ] = None,
    log_level: Annotated[
        str, typer.Option(metavar="LEVEL", help="uvicorn's log level.")
    ] = "warning",
) -> None:
    """Serve the web UI.

    Conversations with agents streamed live, tasks with every frame on the wire, agents added
    by URL with their cards checked, and an inspector for any A2A agent.
    """
    try:
        from accord.ui.access import UiAccess
        from accord.ui.agents import HostLink
        from accord.ui.app import create_ui_app
    except ImportError as exc:
        raise BadArgument(
            f"the UI needs the `ui` extra (pip install 'accord[ui]'): {exc}"
        ) from None
    urls = list(agents or ())
    urls += [u.strip() for u in os.environ.get(AGENTS_VARIABLE, "").split(",") if u.strip()]
    hosts = exposure.allowed_hosts(host, port, allowed_host)
    access = UiAccess(hosts, exposure.login_token(host, token))
    guard = exposure.fetch_guard(host, fetch_allow)
    link = HostLink(host_url, os.environ.get(HOST_TOKEN_VARIABLE) or None) if host_url else None
    shown = f"[{host}]" if ":" in host else host
    address = f"http://{shown}:{port}/"
    login = f"?token={access.login_token}" if access.login_token else ""
    typer.echo(f"accord ui: serving the web UI at {address}{login}", err=True)
    if exposure.beyond_loopback(host):
        typer.echo(
            "accord ui: listening beyond loopback: every request needs the token (open the URL"
            " above once; scripts send Authorization: Bearer TOKEN); browsers must name a Host"
            f" it answers ({', '.join(hosts.patterns)}; more with --allowed-host); agents on"
            " loopback or private addresses are refused unless --fetch-allow names them",
            err=True,
        )
    uvicorn.run(
        create_ui_app(
            urls,
            host=link,
            access=access,
            fetch_guard=guard,
            registry=registry,
            trace_url=trace_url,
        ),
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,  # open pages' event streams never end
        **HttpLimits().uvicorn_options(),
    )
