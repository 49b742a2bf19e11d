"""The commands that talk to an agent: card, send, chat, get, cancel, tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer

from accord.cli import chat as chat_session
from accord.cli.card import card_app
from accord.cli.conversation import ViewSettings
from accord.cli.errors import BadArgument, exit_with, fail, outcome_code, reports_errors
from accord.cli.exit_codes import EXIT_INTERRUPTED
from accord.cli.inputs import data_part, file_part
from accord.cli.options import (
    AgentAddress,
    JsonOutput,
    MetadataOption,
    TaskIdArgument,
    VerboseOutput,
    metadata_of,
    talks_to_agent,
)
from accord.cli.output import (
    new_console,
    print_json_line,
    show_card,
    show_ending,
    show_status_message,
    task_header,
)
from accord.cli.turns import OutputChoice, TaskSeen, Turn, follow_task, show_task, take_turn
from accord.codecs.versions import ProtocolVersion
from accord.core.query import MAX_PAGE_SIZE
from accord.errors import A2AClientError
from accord.types import Part, PushNotificationConfig, TaskState

app = typer.Typer()

SaveDir = Annotated[
    Path,
    typer.Option(
        "--save-to",
        metavar="DIR",
        help="Save the files the agent sends in this folder.",
        file_okay=False,
    ),
]
SaveDirIfAsked = Annotated[
    Path | None,
    typer.Option(
        "--save-to",
        metavar="DIR",
        help="Save the task's files in this folder (without it, they are only named).",
        file_okay=False,
        show_default=False,
    ),
]


@card_app.command("show")  # `accord card URL`; `accord card verify URL` checks its signature
@reports_errors
@talks_to_agent
def card(agent: AgentAddress, json_output: JsonOutput = False) -> None:
    """Show an agent's card.

    Its interfaces (binding, version, URL), capabilities, skills and extensions.
    """
    with agent.connect() as client:
        agent_card = client.get_card()
    if json_output:
        print_json_line(agent_card)
    else:
        show_card(new_console(), agent_card)


@app.command()
@reports_errors
@talks_to_agent
def send(
    agent: AgentAddress,
    text: Annotated[
        str | None,
        typer.Argument(metavar="TEXT", help="The message text.", show_default=False),
    ] = None,
    stream: Annotated[
        bool | None,
        typer.Option(
            "--stream/--no-stream",
            help="Follow the answer as it comes, or wait for all of it. Default: stream when"
            " the agent can, except with --json.",
            show_default=False,
        ),
    ] = None,
    task_id: Annotated[
        str | None,
        typer.Option(metavar="TASK_ID", help="Continue this task (one waiting for input)."),
    ] = None,
    context_id: Annotated[
        str | None, typer.Option(metavar="CONTEXT_ID", help="Send within this context.")
    ] = None,
    files: Annotated[
        list[Path] | None,
        typer.Option(
            "--file", metavar="PATH", help="Attach a file (repeatable).", show_default=False
        ),
    ] = None,
    data: Annotated[
        str | None,
        typer.Option(
            metavar="JSON", help="Attach structured data: a JSON object.", show_default=False
        ),
    ] = None,
    save_to: SaveDir = Path(),
    json_output: JsonOutput = False,
    verbose: VerboseOutput = False,
    push_url: Annotated[
        str | None,
        typer.Option(metavar="URL", help="Have the task's updates POSTed to this webhook."),
    ] = None,
    push_token: Annotated[
        str | None,
        typer.Option(metavar="TOKEN", help="The webhook's X-A2A-Notification-Token."),
    ] = None,
    metadata: MetadataOption = None,
    resume: Annotated[
        str | None,
        typer.Option(
            metavar="TASK_ID",
            help="Follow this running task again instead of sending (after Ctrl-C, say).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Send a message to an agent and show its answer.

    The answer streams in as the agent writes it; files it sends are saved. The first
    interface of the card that accord speaks is used, unless --transport or --version pick
    another. Ctrl-C stops showing the answer and leaves the task running. The exit status
    says how the task ended (accord --help lists them).
    """
    if (text is None) == (resume is None):
        raise BadArgument("give the message TEXT, or --resume TASK_ID to follow a task again")
    parts: list[Part] = [file_part(path) for path in files or ()]
    if data is not None:
        parts.append(data_part(data))
    with agent.connect() as client:
        agent_card = client.get_card()
        hint = f"answer with: accord send {agent.url} TEXT --task-id {{task_id}}"
        settings = ViewSettings(agent_card.name, save_to, reply_hint=hint)
        view = OutputChoice(json_output, verbose).view(new_console(), settings)
        can_stream = bool(agent_card.capabilities.streaming)
        streaming = can_stream and not json_output if stream is None else stream
        push = PushNotificationConfig(url=push_url, token=push_token) if push_url else None
        seen = TaskSeen(task_id=resume or task_id)
        try:
            if resume is not None:
                state = follow_task(client, view, resume)
            else:
                turn = Turn(text or "", parts, task_id, context_id, push=push)
                turn.metadata = metadata_of(metadata)
                turn.observers.append(seen.observe)
                state = take_turn(client, view, turn, streaming=streaming)
        except KeyboardInterrupt:
            _interrupted(agent.url, seen.task_id)
    exit_with(outcome_code(state))


def _interrupted(url: str, task_id: str | None) -> NoReturn:
    """After Ctrl-C during an answer: the task goes on, and how to reach it again."""
    if task_id is None:
        fail("interrupted", EXIT_INTERRUPTED)
    fail(
        f"interrupted: task {task_id} goes on at the agent.\n"
        f"  accord get {url} {task_id}            shows it\n"
        f"  accord send {url} --resume {task_id}  follows it again\n"
        f"  accord cancel {url} {task_id}         cancels it",
        EXIT_INTERRUPTED,
    )


@app.command()
@reports_errors
@talks_to_agent
def chat(
    agent: AgentAddress,
    save_to: SaveDir = Path(),
    verbose: VerboseOutput = False,
    metadata: MetadataOption = None,
) -> None:
    """Talk with an agent, line by line.

    Each line is a message; /help lists the chat's own commands, Ctrl-D leaves. Read from a
    pipe, the exit status says how the last task ended (accord --help lists them).
    """
    request_metadata = metadata_of(metadata)
    with agent.connect() as client:
        output = OutputChoice(verbose=verbose)
        code = chat_session.run_chat(
            client, new_console(), output, save_to, metadata=request_metadata
        )
    exit_with(code)


@app.command()
@reports_errors
@talks_to_agent
def get(
    agent: AgentAddress,
    task_id: TaskIdArgument,
    history: Annotated[
        int | None,
        typer.Option(min=0, metavar="N", help="Show at most this many recent messages."),
    ] = None,
    save_to: SaveDirIfAsked = None,
    json_output: JsonOutput = False,
    verbose: VerboseOutput = False,
) -> None:
    """Show a task: its messages, artifacts and state.

    Files are named, and saved only with --save-to. The exit status says how the task
    ended (accord --help lists them); one still working or waiting is 0.
    """
    with agent.connect() as client:
        task = client.get_task(task_id, history_length=history)
        show_task(client.card.name if client.card else "agent", task, save_to, json_output, verbose)
    exit_with(outcome_code(task.status.state, waiting_is_done=True))


@app.command()
@reports_errors
@talks_to_agent
def cancel(
    agent: AgentAddress,
    task_id: TaskIdArgument,
    json_output: JsonOutput = False,
    verbose: VerboseOutput = False,
) -> None:
    """Cancel a task that has not finished.

    Says the state the task ended in (and the agent's last words, if any).
    """
    with agent.connect() as client:
        task = client.cancel_task(task_id)
    if json_output:
        print_json_line(task)
    elif verbose:
        console = new_console()
        console.print(task_header(task))
        show_status_message(console, task.status)
    else:
        show_ending(new_console(), task)
    if task.status.state is not TaskState.CANCELED:
        exit_with(outcome_code(task.status.state, waiting_is_done=True))


@app.command()
@reports_errors
@talks_to_agent
def tasks(
    agent: AgentAddress,
    state: Annotated[
        str | None,
        typer.Option(
            metavar="STATE",
            help="Only tasks in this state, as accord get names it (working, completed, ...).",
            show_default=False,
        ),
    ] = None,
    context_id: Annotated[
        str | None,
        typer.Option(metavar="CONTEXT_ID", help="Only the tasks of this context."),
    ] = None,
    limit: Annotated[
        int, typer.Option(min=1, max=MAX_PAGE_SIZE, metavar="N", help="Show at most N tasks.")
    ] = 20,
    page_token: Annotated[
        str | None,
        typer.Option(metavar="TOKEN", help="Continue a listing where its last page ended."),
    ] = None,
    json_output: JsonOutput = False,
) -> None:
    """List an agent's tasks.

    The most recently updated first (A2A 1.0's ListTasks).
    """
    wanted = _task_state(state) if state is not None else None
    with agent.connect(preferred_version=ProtocolVersion.V1_0) as client:
        client.get_card()
        try:
            client.transport()
        except A2AClientError as exc:
            if agent.version is not None:
                raise
            raise A2AClientError(f"listing tasks needs an A2A 1.0 interface: {exc}") from None
        page = client.list_tasks(
            context_id=context_id, state=wanted, page_size=limit, page_token=page_token
        )
    if json_output:
        for task in page.tasks:
            print_json_line(task)
        return
    console = new_console()
    if not page.tasks:
        console.print("no tasks", style="dim")
        return
    rows = [("task", "state", "context", "updated")]
    for task in page.tasks:
        updated = (task.status.timestamp or "")[:19].replace("T", " ")
        rows.append((task.id, task.status.state.value, task.context_id, updated))
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for number, row in enumerate(rows):  # columns padded by hand: ids are never cut short
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        console.print(f"{line}  {row[3]}", style="bold" if number == 0 else None)
    if page.next_page_token:
        console.print(f"(more: --page-token {page.next_page_token})", style="dim")


def _task_state(text: str) -> TaskState:
    try:
        return TaskState(text.strip().lower().replace("_", "-"))
    except ValueError:
        names = ", ".join(s.value for s in TaskState)
        raise BadArgument(f"--state must be one of {names}, got {text!r}") from None
