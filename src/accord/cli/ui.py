"""`accord ui`: serve the web UI for the agents named, until interrupted."""

from __future__ import annotations

import os
from typing import Annotated

import typer
import uvicorn

from accord.cli.errors import BadArgument, reports_errors

AGENTS_VARIABLE = "ACCORD_UI_AGENTS"
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
    host: Annotated[
        str, typer.Option(metavar="HOST", help="Interface to listen on.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(metavar="PORT", help="Port to listen on.")] = 8080,
    log_level: Annotated[
        str, typer.Option(metavar="LEVEL", help="uvicorn's log level.")
    ] = "warning",
) -> None:
    """Serve the web UI.

    Conversations with agents streamed live, tasks with every frame on the wire, agents added
    by URL with their cards checked, and an inspector for any A2A agent.
    """
    try:
        from accord.ui.app import create_ui_app
    except ImportError as exc:
        raise BadArgument(
            f"the UI needs the `ui` extra (pip install 'accord[ui]'): {exc}"
        ) from None
    urls = list(agents or ())
    urls += [u.strip() for u in os.environ.get(AGENTS_VARIABLE, "").split(",") if u.strip()]
    typer.echo(f"accord ui: serving the web UI at http://{host}:{port}/", err=True)
    uvicorn.run(
        create_ui_app(urls),
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,  # open pages' event streams never end
    )
