"""One turn with an agent: send a message, show the answer as it comes, in the view asked for."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from accord.cli.conversation import ConversationView, ViewSettings
from accord.cli.output import JsonView, ProtocolView, View, new_console
from accord.client import SyncClient
from accord.types import Part, PushNotificationConfig, StreamEvent, Task


@dataclass(frozen=True, slots=True)
class OutputChoice:
    """What the user asked to see: the conversation (default), the protocol, or wire JSON."""

    json: bool = False
    verbose: bool = False

    def view(
        self,
        console: Console,
        settings: ViewSettings,
        *,
        history: bool = False,
        shown_messages: set[str] | None = None,
    ) -> View:
        if self.json:
            return JsonView()
        if self.verbose:
            return ProtocolView(console, history=history)
        return ConversationView(console, settings, shown_messages)


@dataclass(slots=True)
class Turn:
    """A message to send: its text, extra parts, the task and context it continues, and the
    webhook to tell of the task's updates, if any."""

    text: str
    parts: Sequence[Part] = ()
    task_id: str | None = None
    context_id: str | None = None
    push: PushNotificationConfig | None = None
    observers: list[Callable[[StreamEvent], None]] = field(default_factory=list)


def take_turn(client: SyncClient, view: View, turn: Turn, *, streaming: bool) -> None:
    """Send `turn` and show the answer: every event of the stream, or the one result."""
    text, parts, task_id, context_id = turn.text, turn.parts, turn.task_id, turn.context_id
    try:
        if streaming:
            if turn.task_id is not None and isinstance(view, ConversationView):
                view.continuing(turn.task_id)
            events = client.stream(
                text, parts=parts, task_id=task_id, context_id=context_id, push=turn.push
            )
            for event in events:
                _observe(turn, event)
                view.show(event)
        else:
            if isinstance(view, ConversationView):
                view.waiting()
            result = client.send(
                text, parts=parts, task_id=task_id, context_id=context_id, push=turn.push
            )
            _observe(turn, result)
            view.show(result)
    finally:
        view.finish()


def _observe(turn: Turn, event: StreamEvent) -> None:
    for observer in turn.observers:
        observer(event)


def show_task(agent_name: str, task: Task, save_to: Path, json_output: bool, verbose: bool) -> None:
    """A task with its messages, each said by whom, its artifacts and its state."""
    settings = ViewSettings(agent_name, save_to, show_history=True, always_show_state=True)
    view = OutputChoice(json_output, verbose).view(new_console(), settings, history=True)
    view.show(task)
    view.finish()
