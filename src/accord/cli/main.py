"""The `accord` command: the root, its --version, and the command modules it gathers."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

import accord
from accord.cli import credentials
from accord.cli.exit_codes import EXIT_CODES_HELP

if TYPE_CHECKING:  # the click that typer carries (its own copy in recent versions)
    from typer._click import Command, Context, HelpFormatter


@dataclass(frozen=True, slots=True)
class Entry:
    """Where a command lives (`MODULE:ATTRIBUTE`: a function, the typer app that holds it, or
    with `group` a typer app that is the command) and its one-line help."""

    where: str
    help: str
    group: bool = False


_AGENT_COMMANDS = "accord.cli.agent_commands:app"

# Each command module is imported only when its command runs, so that `accord --help` and
# each command start quickly; tests/test_cli.py checks these lines against the commands.
COMMANDS = {
    "host": Entry("accord.cli.host:host", "Serve the multi-agent host."),
    "ui": Entry("accord.cli.ui:ui", "Serve the web UI."),
    "demo": Entry(
        "accord.cli.demo:demo", "Start the demo: the sample agents, the host and the web UI."
    ),
    "serve": Entry("accord.cli.server_commands:app", "Serve an agent over A2A."),
    "gateway": Entry("accord.cli.gateway:gateway", "Put agents behind accord, in every version."),
    "db": Entry("accord.cli.server_commands:db", "Manage the database of the task store.", True),
    "send": Entry(_AGENT_COMMANDS, "Send a message to an agent and show its answer."),
    "chat": Entry(_AGENT_COMMANDS, "Talk with an agent, line by line."),
    "get": Entry(_AGENT_COMMANDS, "Show a task: its messages, artifacts and state."),
    "cancel": Entry(_AGENT_COMMANDS, "Cancel a task that has not finished."),
    "tasks": Entry(_AGENT_COMMANDS, "List an agent's tasks."),
    # `card show` is defined beside the other agent commands, which add it to `card_app`.
    "card": Entry(
        "accord.cli.agent_commands:card_app", "Show an agent's card, or check its signature.", True
    ),
    "keys": Entry("accord.cli.keys:keys_app", "Manage the agent's signing keys.", True),
    "push": Entry(
        "accord.cli.push:push_app", "Receive push notifications, or manage a task's webhooks.", True
    ),
    "mcp": Entry("accord.cli.mcp_bridge:mcp_app", "Offer A2A agents to MCP clients.", True),
    "registry": Entry("accord.cli.registry:registry_app", "Serve or search a registry.", True),
}


def load(name: str) -> Command:
    """The command `name` as click runs it, its module imported."""
    entry = COMMANDS[name]
    module, _, attribute = entry.where.partition(":")
    found = getattr(import_module(module), attribute)
    holder = _accord_app()
    if entry.group:
        holder.add_typer(found, name=name)
    elif isinstance(found, typer.Typer):
        holder.add_typer(found)
    else:
        holder.command(name)(found)
    command: Command = typer.main.get_group(holder).commands[name]
    _arguments_by_name(command)
    return command


def _arguments_by_name(command: Command) -> None:
    """Show each argument in help as its placeholder alone (`URL`), not typer's `URL <str>`."""
    for param in command.params:
        if isinstance(param, TyperArgument) and param.metavar:
            setattr(param, "display_type_rich", _no_type)  # noqa: B010 (a method, per object)
    for subcommand in getattr(command, "commands", {}).values():
        _arguments_by_name(subcommand)


def _no_type(ctx: Context) -> None:
    return None


class LazyCommands(TyperGroup):
    """The root group: lists its commands from `COMMANDS`, loads one when it is asked for."""

    def list_commands(self, ctx: Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name not in COMMANDS:
            return None
        if cmd_name not in self.commands:
            self.commands[cmd_name] = load(cmd_name)
        return self.commands[cmd_name]

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The commands and their help, laid out as click does, without loading them."""
        limit = formatter.width - 6 - max(map(len, COMMANDS))
        rows = [
            (name, TyperCommand(name, help=e.help).get_short_help_str(limit))
            for name, e in COMMANDS.items()
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _accord_app(**options: Any) -> typer.Typer:
    return typer.Typer(
        name="accord",
        help="Serve A2A agents and talk to them.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        rich_markup_mode=None,  # click's plain help: flags shown as flags, paragraphs rewrapped
        **options,
    )


app = _accord_app(cls=LazyCommands, epilog=EXIT_CODES_HELP)


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
    given = (api_key, bearer, basic, client_id, client_secret, scope, cert, key, ca)
    credentials.remember(dict(zip(credentials.NAMES, given, strict=True)))


def main() -> None:
    """Entry point of the `accord` script and of `python -m accord`."""
    app()
