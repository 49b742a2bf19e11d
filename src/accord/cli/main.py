"""The `accord` command: its subcommands and the entry point."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from accord.cli import chat as chat_session
from accord.cli import host as host_command
from accord.cli import serve as serving
from accord.cli import storage
from accord.cli.errors import BadArgument, reports_errors
from accord.cli.inputs import data_part, file_part
from accord.cli.output import (
    StreamPrinter,
    new_console,
    print_json_line,
    show_card,
    show_result,
)
from accord.client import SyncClient
from accord.runtime import DEFAULT_BUS_URL
from accord.server.http_limits import HttpLimits
from accord.store import DEFAULT_STORE_URL, Retention
from accord.store.retention import (
    DEFAULT_CLEANUP_INTERVAL,
    DEFAULT_EVENT_TTL,
    DEFAULT_FINISHED_TASK_TTL,
    DEFAULT_MAX_EVENTS_PER_TASK,
)
from accord.types import Message, Part, Task

app = typer.Typer(
    name="accord",
    help="Serve A2A agents and talk to them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

AgentUrl = Annotated[
    str, typer.Argument(metavar="URL", help="The agent's base URL or its card's URL.")
]
JsonOutput = Annotated[
    bool, typer.Option("--json", help="Print the wire JSON (one line per object).")
]
TransportOption = Annotated[
    str | None,
    typer.Option(
        "--transport", help="Use the card's interface of this binding: JSONRPC, HTTP+JSON or GRPC."
    ),
]
VersionOption = Annotated[
    str | None,
    typer.Option(
        "--version",
        help="Use the card's interface of this A2A version: 1.0, 0.3 or 0.1 (0.1: the card's"
        " JSON-RPC interface, unless one says 0.1).",
    ),
]
StoreUrl = Annotated[
    str,
    typer.Option(
        "--store",
        envvar="ACCORD_STORE",
        help="Where tasks live: sqlite:///PATH (a file on this machine), postgresql://USER@HOST/DB"
        " (shared by replicas) or memory (gone when the server stops).",
    ),
]

db = typer.Typer(
    help="Manage the database of the task store.", no_args_is_help=True, add_completion=False
)
app.add_typer(db, name="db")
host_command.register(app)


@app.command()
@reports_errors
def serve(
    target: Annotated[
        str, typer.Argument(help="MODULE:ATTRIBUTE naming an accord.Agent or an ASGI app.")
    ],
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    store: StoreUrl = DEFAULT_STORE_URL,
    task_ttl: Annotated[
        str, typer.Option(help="Keep finished tasks this long (30s, 15m, 12h, 7d; off: forever).")
    ] = storage.format_duration(DEFAULT_FINISHED_TASK_TTL),
    event_ttl: Annotated[
        str, typer.Option(help="Keep logged task events this long (off: as long as the task).")
    ] = storage.format_duration(DEFAULT_EVENT_TTL),
    max_task_events: Annotated[
        int, typer.Option(min=1, help="Keep at most this many recent events per task.")
    ] = DEFAULT_MAX_EVENTS_PER_TASK,
    cleanup_interval: Annotated[
        str, typer.Option(help="How often to forget expired tasks and events (off: never).")
    ] = storage.format_duration(DEFAULT_CLEANUP_INTERVAL),
    bus: Annotated[
        str,
        typer.Option(
            envvar="ACCORD_BUS",
            help="Event bus: memory (one server) or redis://host:6379/0 (several replicas).",
        ),
    ] = DEFAULT_BUS_URL,
    runner_ttl: Annotated[
        str,
        typer.Option(help="A replica silent this long has its running tasks taken over."),
    ] = "15s",
    graceful_timeout: Annotated[
        str, typer.Option(help="On SIGTERM, wait this long for open requests and streams.")
    ] = "10s",
    grpc_port: Annotated[
        int | None,
        typer.Option(help="Also serve A2A over gRPC (1.0 and 0.3) on this port (grpc extra)."),
    ] = None,
    max_connections: Annotated[
        int, typer.Option(min=1, help="Refuse connections past this many (503 + Retry-After).")
    ] = HttpLimits().max_connections,
    header_timeout: Annotated[
        str, typer.Option(help="A request's headers must arrive within this time (else 408).")
    ] = "10s",
    body_timeout: Annotated[
        str, typer.Option(help="A request's body must arrive within this time (else 408).")
    ] = "60s",
    debug: Annotated[
        bool, typer.Option(help="Tell callers the agent's and server's errors (development).")
    ] = False,
) -> None:
    """Serve an agent over A2A (JSON-RPC at /, card at /.well-known/agent-card.json).

    Tasks persist in ./.accord/accord.db (SQLite) unless --store names another store.
    """
    interval = storage.parse_duration("--cleanup-interval", cleanup_interval)
    settings = storage.StoreSettings(
        url=store,
        retention=Retention(
            finished_task_ttl=storage.parse_duration("--task-ttl", task_ttl),
            event_ttl=storage.parse_duration("--event-ttl", event_ttl),
            max_events_per_task=max_task_events,
        ),
        cleanup_interval=interval.total_seconds() if interval is not None else None,
    )
    serving.run(
        target,
        host,
        port,
        log_level,
        settings,
        serving.ReplicaSettings(
            bus_url=bus,
            runner_ttl=_seconds("--runner-ttl", runner_ttl),
            graceful_timeout=_seconds("--graceful-timeout", graceful_timeout),
        ),
        grpc_port,
        HttpLimits(
            header_timeout=_seconds("--header-timeout", header_timeout),
            body_timeout=_seconds("--body-timeout", body_timeout),
            max_connections=max_connections,
        ),
        debug,
    )


def _seconds(option: str, text: str) -> float:
    duration = storage.parse_duration(option, text)
    if duration is None:
        raise BadArgument(f"{option} cannot be off")
    return duration.total_seconds()


@db.command("upgrade")
@reports_errors
def db_upgrade(store: StoreUrl = DEFAULT_STORE_URL) -> None:
    """Create or upgrade the task store's schema (accord serve also does this on start)."""
    typer.echo(storage.upgrade_schema(store))


@app.command()
@reports_errors
def card(url: AgentUrl, json_output: JsonOutput = False) -> None:
    """Show an agent's card, with every interface it offers (binding, version, URL)."""
    with SyncClient(url) as client:
        agent_card = client.get_card()
    if json_output:
        print_json_line(agent_card)
    else:
        show_card(new_console(), agent_card)


@app.command()
@reports_errors
def send(
    url: AgentUrl,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The message text.")],
    stream: Annotated[
        bool, typer.Option("--stream", help="Follow the answer as it comes.")
    ] = False,
    task_id: Annotated[
        str | None, typer.Option(help="Continue this task (one waiting for input).")
    ] = None,
    context_id: Annotated[str | None, typer.Option(help="Send within this context.")] = None,
    files: Annotated[
        list[Path] | None,
        typer.Option("--file", help="Attach a file (repeatable).", show_default=False),
    ] = None,
    data: Annotated[
        str | None, typer.Option(help="Attach structured data: a JSON object.", show_default=False)
    ] = None,
    json_output: JsonOutput = False,
    transport: TransportOption = None,
    version: VersionOption = None,
) -> None:
    """Send a message to an agent and show its answer.

    The first interface of the card accord speaks is used, unless --transport or --version
    pick another.
    """
    parts: list[Part] = [file_part(path) for path in files or ()]
    if data is not None:
        parts.append(data_part(data))
    with SyncClient(url, transport=transport, version=version) as client:
        if not stream:
            result = client.send(text, parts=parts, task_id=task_id, context_id=context_id)
            print_result(result, json_output)
            return
        printer = StreamPrinter(new_console())
        show = print_json_line if json_output else printer.show
        try:
            for event in client.stream(text, parts=parts, task_id=task_id, context_id=context_id):
                show(event)
        finally:
            printer.finish()


@app.command()
@reports_errors
def get(
    url: AgentUrl,
    task_id: Annotated[str, typer.Argument(metavar="TASK_ID", help="The task's id.")],
    history: Annotated[
        int | None, typer.Option(min=0, help="Show at most this many recent messages.")
    ] = None,
    json_output: JsonOutput = False,
) -> None:
    """Show a task."""
    with SyncClient(url) as client:
        task = client.get_task(task_id, history_length=history)
    print_result(task, json_output, history=True)


@app.command()
@reports_errors
def cancel(
    url: AgentUrl,
    task_id: Annotated[str, typer.Argument(metavar="TASK_ID", help="The task's id.")],
    json_output: JsonOutput = False,
) -> None:
    """Cancel a task that has not finished."""
    with SyncClient(url) as client:
        task = client.cancel_task(task_id)
    print_result(task, json_output)


@app.command()
@reports_errors
def chat(url: AgentUrl) -> None:
    """Talk with an agent: each line is a message; /quit or Ctrl-D leaves."""
    with SyncClient(url) as client:
        chat_session.run_chat(client, new_console())


def print_result(result: Task | Message, json_output: bool, *, history: bool = False) -> None:
    if json_output:
        print_json_line(result)
    else:
        show_result(new_console(), result, history=history)


def main() -> None:
    """Entry point of the `accord` script and of `python -m accord`."""
    app()
