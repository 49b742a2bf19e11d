"""The `accord` command: the root, its --version, and the command modules it gathers."""

from __future__ import annotations

from typing import Annotated

import typer

import accord
from accord.cli import agent_commands, credentials, server_commands
from accord.cli import demo as demo_launcher
from accord.cli import host as host_command
from accord.cli import ui as web_ui
from accord.cli.card import card_app
from accord.cli.keys import keys_app
from accord.cli.push import push_app

app = typer.Typer(
    name="accord",
    help="Serve A2A agents and talk to them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # click's plain help: flags shown as flags, paragraphs rewrapped
)

# Each command module has its own typer app; one line here adds its commands.
app.add_typer(server_commands.app)
app.add_typer(server_commands.db, name="db")
app.add_typer(agent_commands.app)
app.add_typer(card_app, name="card")
app.add_typer(keys_app, name="keys")
app.add_typer(push_app, name="push")
host_command.register(app)
app.command()(web_ui.ui)
app.command()(demo_launcher.demo)


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"accord {accord.__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print accord's version and exit.",
        ),
    ] = False,
    api_key: credentials.ApiKeyOption = None,
    bearer: credentials.BearerOption = None,
    basic: credentials.BasicOption = None,
    client_id: credentials.ClientIdOption = None,
    client_secret: credentials.ClientSecretOption = None,
    scope: credentials.ScopeOption = None,
    cert: credentials.CertOption = None,
    key: credentials.KeyOption = None,
    ca: credentials.CaOption = None,
) -> None:
    """Serve A2A agents and talk to them."""
    credentials.remember(api_key, bearer, basic, client_id, client_secret, scope, cert, key, ca)


def main() -> None:
    """Entry point of the `accord` script and of `python -m accord`."""
    app()
