"""One turn with an agent: send a message, show the answer as it comes, in the view asked for."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from accord.cli.conversation import ConversationView, ViewSettings
from accord.cli.output import JsonView, ProtocolView, View, new_console
from accord.client import SyncClient
from accord.types import (
    Metadata,
    Part,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
)


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
            return ProtocolView(console, history=history, save_dir=settings.save_dir)
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
    metadata: Metadata | None = None


@dataclass(slots=True)
class TaskSeen:
    """The task an answer is about, and its state, as the events of the answer tell."""

    task_id: str | None = None
    state: TaskState | None = None

    def observe(self, event: StreamEvent) -> None:
        if isinstance(event, Task):
            self.task_id, self.state = event.id, event.status.state
        elif isinstance(event, TaskStatusUpdateEvent):
            self.task_id, self.state = event.task_id, event.status.state


def take_turn(client: SyncClient, view: View, turn: Turn, *, streaming: bool) -> TaskState | None:
    """Send `turn` and show the answer: every event of the stream, or the one result. The
    task's state at the end (None: the agent replied with a message)."""
    seen = TaskSeen()
    observers = [seen.observe, *turn.observers]
    message: dict[str, Any] = {  # the same message, sent or streamed
        "parts": turn.parts,
        "task_id": turn.task_id,
        "context_id": turn.context_id,
        "push": turn.push,
        "metadata": turn.metadata,
    }
    try:
        if streaming:
            if turn.task_id is not None and isinstance(view, ConversationView):
                view.continuing(turn.task_id)
            for event in client.stream(turn.text, **message):
                _observe(observers, event)
                view.show(event)
        else:
            if isinstance(view, ConversationView):
                view.waiting()
            result = client.send(turn.text, **message)
            _observe(observers, result)
            view.show(result)
    finally:
        view.finish()
    return seen.state


def follow_task(client: SyncClient, view: View, task_id: str) -> TaskState | None:
    """Show a running task again from now on (`tasks/resubscribe`) until it ends or waits (a
    finished one as it ended); its state then."""
    seen = TaskSeen()
    try:
        task = client.get_task(task_id)
        if task.status.state.is_terminal:  # nothing to follow: how it ended
            seen.observe(task)
            view.show(task)
            return seen.state
        for event in client.resubscribe(task_id):
            seen.observe(event)
            view.show(event)
    finally:
        view.finish()
    return seen.state


def _observe(observers: list[Callable[[StreamEvent], None]], event: StreamEvent) -> None:
    for observer in observers:
        observer(event)


def show_task(
    agent_name: str, task: Task, save_to: Path | None, json_output: bool, verbose: bool
) -> None:
    """A task with its messages, each said by whom, its artifacts and its state."""
    settings = ViewSettings(agent_name, save_to, show_history=True, always_show_state=True)
    view = OutputChoice(json_output, verbose).view(new_console(), settings, history=True)
    view.show(task)
    view.finish()
