"""`accord chat`: an interactive conversation with an agent, turn by turn, in one context."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

import typer
from rich.console import Console

from accord.cli.errors import error_line
from accord.cli.output import StreamPrinter, show_result
from accord.client import SyncClient
from accord.errors import A2AClientError, A2AError
from accord.types import Message, StreamEvent, Task, TaskState, TaskStatusUpdateEvent

QUIT_COMMANDS = frozenset({"/quit", "/exit"})


@dataclass
class Conversation:
    """What the next turn continues: the context, and the task when it waits for the user."""

    context_id: str | None = None
    task_id: str | None = None
    state: TaskState | None = None

    def observe(self, event: StreamEvent) -> None:
        """Follow the context and task state through an answer or stream event."""
        if isinstance(event, Task):
            self.task_id, self.context_id = event.id, event.context_id
            self.state = event.status.state
        elif isinstance(event, TaskStatusUpdateEvent):
            self.task_id, self.context_id = event.task_id, event.context_id
            self.state = event.status.state
        elif isinstance(event, Message):
            self.context_id = event.context_id or self.context_id
            self.task_id, self.state = None, None

    @property
    def continued_task_id(self) -> str | None:
        """The task the next message belongs to: one waiting for input, else a new one."""
        return self.task_id if self.state is not None and self.state.is_interrupted else None


def run_chat(client: SyncClient, console: Console, read_line: Callable[[str], str] = input) -> None:
    """Read lines and send each to the agent until /quit, /exit, end of input or Ctrl-C."""
    card = client.get_card()
    streaming = bool(card.capabilities.streaming)
    console.print(f"Talking to {card.name}. /quit to leave.", style="dim")
    prompt = "you> " if sys.stdin.isatty() else ""
    if prompt:
        with suppress(ImportError):
            importlib.import_module("readline")  # line editing and history for input()
    conversation = Conversation()
    try:
        while True:
            try:
                line = read_line(prompt).strip()
            except EOFError:
                break
            if line in QUIT_COMMANDS:
                break
            if line:
                _take_turn(client, console, conversation, line, streaming=streaming)
    except KeyboardInterrupt:
        console.print()


def _take_turn(
    client: SyncClient, console: Console, conversation: Conversation, line: str, *, streaming: bool
) -> None:
    task_id, context_id = conversation.continued_task_id, conversation.context_id
    try:
        if streaming:
            printer = StreamPrinter(console)
            try:
                for event in client.stream(line, task_id=task_id, context_id=context_id):
                    conversation.observe(event)
                    printer.show(event)
            finally:
                printer.finish()
        else:
            result = client.send(line, task_id=task_id, context_id=context_id)
            conversation.observe(result)
            show_result(console, result)
    except (A2AError, A2AClientError) as exc:
        typer.echo(error_line(exc), err=True)
