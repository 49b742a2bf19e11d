"""`accord chat`: a conversation with an agent, turn by turn in one context, with /commands.

A line is a message to the agent, unless it starts with `/`: then it is a command of the
chat itself (`/help` lists them; `//text` sends `/text`). Ctrl-C while the agent answers
stops showing the answer and offers to cancel its task; Ctrl-D leaves.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.console import Console

from accord.cli.conversation import ViewSettings
from accord.cli.errors import BadArgument, error_line, outcome_code
from accord.cli.exit_codes import EXIT_FAILURE
from accord.cli.forms import Form, fill_in, form_in
from accord.cli.inputs import data_part, file_part
from accord.cli.turns import OutputChoice, Turn, show_task, take_turn
from accord.client import SyncClient
from accord.errors import A2AClientError, A2AError
from accord.types import (
    DataPart,
    Message,
    Metadata,
    Part,
    StreamEvent,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
)

COMMANDS = {
    "/help": "this list",
    "/new": "start a new conversation (a new context)",
    "/task": "show the current task: its messages, artifacts and state",
    "/cancel": "cancel the current task",
    "/file PATH": "attach a file to your next message",
    "/data JSON": "attach structured data (a JSON object) to your next message",
    "/quit": "leave (so does /exit or Ctrl-D)",
}


@dataclass
class Conversation:
    """What the next turn continues: the context, the task when it waits for the user, and
    the parts to attach to the next message."""

    context_id: str | None = None
    task_id: str | None = None
    state: TaskState | None = None
    attachments: list[Part] = field(default_factory=list)
    form: Form | None = None
    """The form the task waits to have filled in, if it asked with one."""

    def observe(self, event: StreamEvent) -> None:
        """Follow the context, the task's state and its form through an answer or an event."""
        if isinstance(event, Task | TaskStatusUpdateEvent):
            if isinstance(event, Task):
                self.task_id, self.context_id = event.id, event.context_id
            else:
                self.task_id, self.context_id = event.task_id, event.context_id
            self.state = event.status.state
            asking = self.state is TaskState.INPUT_REQUIRED
            self.form = form_in(event.status.message) if asking else None
        elif isinstance(event, Message):
            self.context_id = event.context_id or self.context_id
            self.task_id, self.state, self.form = None, None, None

    @property
    def continued_task_id(self) -> str | None:
        """The task the next message belongs to: one waiting for input, else a new one."""
        return self.task_id if self.state is not None and self.state.is_interrupted else None

    @property
    def running(self) -> bool:
        return self.task_id is not None and self.state is not None and not self.state.is_terminal


class ChatSession:
    """Reads lines and answers them until /quit or the end of input."""

    def __init__(
        self,
        client: SyncClient,
        console: Console,
        output: OutputChoice,
        save_to: Path,
        read_line: Callable[[str], str] = input,
        metadata: Metadata | None = None,
        interactive: bool | None = None,
    ) -> None:
        self.client = client
        self.metadata = metadata
        self.failed = False  # the last turn ended in an error
        self.console = console
        self.output = output
        self.save_to = save_to
        self.read_line = read_line
        self.conversation = Conversation()
        self.shown_messages: set[str] = set()
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        """A person at a terminal: prompts, and forms asked for field by field (from a pipe,
        each line is a message, as the person typed it)."""
        card = client.get_card()
        self.agent_name = card.name
        self.streaming = bool(card.capabilities.streaming)

    def run(self) -> None:
        self.console.print(
            f"Talking to {self.agent_name}. /help for commands, Ctrl-D to leave.", style="dim"
        )
        prompt = "you> " if self.interactive else ""
        if self.interactive:
            with suppress(ImportError):
                importlib.import_module("readline")  # line editing and history for input()
        while True:
            try:
                line = self.read_line(prompt).strip()
            except EOFError:
                if self.interactive:
                    self.console.print()  # leave the prompt's line
                return
            except KeyboardInterrupt:
                self.console.print()  # Ctrl-C at the prompt clears the line, like a shell
                continue
            if line.startswith("/") and not line.startswith("//"):
                if not self.command(line):
                    return
            elif line:
                if not self.interactive:  # show the line, so a piped chat reads as one
                    self.console.print(f"you> {line}", style="bold")
                self.say(line.removeprefix("/"))
                self._fill_in_forms()

    def _fill_in_forms(self) -> None:
        """While the task waits with a form, ask for each of its fields and send them; a
        /command instead of a value leaves the form (and is carried out)."""
        while self.interactive and (form := self.conversation.form) is not None:
            self.conversation.form = None
            self.console.print("(fill in the form; /skip to answer in words)", style="dim")
            try:
                values = fill_in(form, self._ask, self._warn)
            except _LeftForm as left:
                if left.line != "/skip":
                    self.command(left.line)
                return
            except (EOFError, KeyboardInterrupt):
                self.console.print()
                return
            self.conversation.attachments.append(DataPart(data=values))
            self.say("")

    def _ask(self, prompt: str) -> str:
        answer = self.read_line(prompt)
        if answer.strip().startswith("/"):
            raise _LeftForm(answer.strip())
        return answer

    def _warn(self, line: str) -> None:
        self.console.print(line, style="red")

    def say(self, text: str) -> None:
        """One turn: the message with any attachments, the answer shown as it comes."""
        conversation = self.conversation
        turn = Turn(
            text,
            list(conversation.attachments),
            conversation.continued_task_id,
            conversation.context_id,
            observers=[conversation.observe],
            metadata=self.metadata,
        )
        conversation.attachments.clear()
        settings = ViewSettings(self.agent_name, self.save_to)
        view = self.output.view(self.console, settings, shown_messages=self.shown_messages)
        self.failed = False
        try:
            take_turn(self.client, view, turn, streaming=self.streaming)
        except (A2AError, A2AClientError) as exc:
            typer.echo(error_line(exc), err=True)
            self.failed = True
        except KeyboardInterrupt:
            self.console.print()
            self._offer_to_cancel()

    def command(self, line: str) -> bool:
        """Carry out a chat command; False when the chat ends."""
        name, _, argument = line.partition(" ")
        argument = argument.strip()
        if name in ("/quit", "/exit"):
            return False
        if name == "/help":
            width = max(len(usage) for usage in COMMANDS)
            for usage, meaning in COMMANDS.items():
                self.console.print(f"{usage:<{width}}  {meaning}")
            self.console.print("Start a message with // to send it with one /.", style="dim")
        elif name == "/new":
            self.conversation = Conversation()
            self.console.print("(a new conversation)", style="dim")
        elif name == "/task":
            self._show_task()
        elif name == "/cancel":
            self._cancel()
        elif name in ("/file", "/data") and argument:
            self._attach(name, argument)
        else:
            self.console.print(f"unknown command {line!r}: /help lists the commands", style="red")
        return True

    def _attach(self, name: str, argument: str) -> None:
        try:
            part = file_part(Path(argument), name) if name == "/file" else data_part(argument, name)
        except BadArgument as exc:
            self.console.print(str(exc), style="red")
            return
        self.conversation.attachments.append(part)
        self.console.print(f"(attached to your next message: {argument})", style="dim")

    def _show_task(self) -> None:
        task_id = self.conversation.task_id
        if task_id is None:
            self.console.print("(no task yet)", style="dim")
            return
        try:
            task = self.client.get_task(task_id)
        except (A2AError, A2AClientError) as exc:
            typer.echo(error_line(exc), err=True)
            return
        self.console.print(f"task {task.id} in context {task.context_id}", style="dim")
        show_task(self.agent_name, task, self.save_to, json_output=False, verbose=False)

    def _cancel(self) -> None:
        if not self.conversation.running:
            self.console.print("(no running task to cancel)", style="dim")
            return
        try:
            task = self.client.cancel_task(self.conversation.task_id or "")
        except (A2AError, A2AClientError) as exc:
            typer.echo(error_line(exc), err=True)
            return
        self.conversation.observe(task)
        self.console.print(f"({task.status.state.value})", style="yellow")

    def _offer_to_cancel(self) -> None:
        """After Ctrl-C during an answer: ask once whether to cancel its task."""
        if not self.conversation.running:
            self.console.print("(interrupted)", style="dim")
            return
        try:
            answer = self.read_line("Cancel this task? [Y/n] ").strip().lower()
        except (EOFError, KeyboardInterrupt):
            answer = "y"
            self.console.print()
        if answer in ("", "y", "yes"):
            self._cancel()
        else:
            self.console.print("(the task goes on; /task shows it, /cancel ends it)", style="dim")


class _LeftForm(Exception):
    """A /command typed where a form's field was asked for."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


def run_chat(
    client: SyncClient,
    console: Console,
    output: OutputChoice | None = None,
    save_to: Path = Path(),
    read_line: Callable[[str], str] = input,
    metadata: Metadata | None = None,
) -> int:
    """Hold a chat with the agent of `client` until /quit, /exit or the end of input; the
    exit status: from a pipe, how the last turn ended (see `outcome_code`), else 0."""
    output = output or OutputChoice()
    session = ChatSession(client, console, output, save_to, read_line, metadata)
    session.run()
    if session.interactive:
        return 0
    if session.failed:
        return EXIT_FAILURE
    return outcome_code(session.conversation.state)
