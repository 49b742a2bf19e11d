"""What the CLI prints besides a conversation: cards, the protocol view (--verbose), JSON lines."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import typer
from rich.console import Console
from rich.text import Text

from accord.cli.content import describe_file, human_size, save_file
from accord.client.credentials import describe_requirements, describe_scheme
from accord.client.interfaces import describe
from accord.codecs.interfaces import card_interfaces
from accord.types import (
    A2AModel,
    AgentCard,
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    Message,
    Part,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

_STATE_STYLES = {
    TaskState.COMPLETED: "green",
    TaskState.FAILED: "red",
    TaskState.REJECTED: "red",
    TaskState.CANCELED: "yellow",
    TaskState.INPUT_REQUIRED: "magenta",
    TaskState.AUTH_REQUIRED: "magenta",
}


def new_console() -> Console:
    """A console on stdout that leaves agent text as it is (no markup, wrapping or colors)."""
    return Console(highlight=False, soft_wrap=True, markup=False)


def print_json_line(model: A2AModel) -> None:
    """`model` as one line of wire JSON."""
    typer.echo(model.to_json().decode())


def parts_text(
    parts: Sequence[Part],
    *,
    text_joiner: str = "\n",
    file_text: Callable[[FilePart], str] = describe_file,
) -> str:
    """Parts as text: text as is, data as JSON, files as `file_text` says (a short
    description), one per line.

    Consecutive text parts are joined with `text_joiner`: "" for an artifact's chunks.
    """
    lines: list[str] = []
    previous_was_text = False
    for part in parts:
        if isinstance(part, TextPart) and previous_was_text:
            lines[-1] += text_joiner + part.text
        elif isinstance(part, TextPart):
            lines.append(part.text)
        elif isinstance(part, DataPart):
            lines.append(json.dumps(part.data, ensure_ascii=False))
        else:
            lines.append(file_text(part))
        previous_was_text = isinstance(part, TextPart)
    return "\n".join(lines)


def state_text(state: TaskState) -> Text:
    return Text(f"[{state.value}]", style=_STATE_STYLES.get(state, "cyan"))


def labelled(label: str, text: str, style: str = "bold") -> Text:
    return Text.assemble((label, style), " ", text)


def show_card(console: Console, card: AgentCard) -> None:
    """The card's essentials: identity, endpoint, capabilities, security and skills."""
    console.print(Text(f"{card.name} {card.version}", style="bold"))
    console.print(card.description)
    console.print(labelled("url:", card.url))
    console.print(Text("interfaces:", style="bold"))
    for interface in card_interfaces(card):
        console.print(f"  {describe(interface)}", markup=False)
    capabilities = card.capabilities
    flags = {
        "streaming": capabilities.streaming,
        "push notifications": capabilities.push_notifications,
        "state history": capabilities.state_transition_history,
        "extended card": card.supports_authenticated_extended_card,
    }
    enabled = [name for name, on in flags.items() if on]
    console.print(labelled("capabilities:", ", ".join(enabled) or "none"))
    console.print(labelled("input:", ", ".join(card.default_input_modes)))
    console.print(labelled("output:", ", ".join(card.default_output_modes)))
    if card.security:
        console.print(labelled("security:", describe_requirements(card)))
    elif card.security_schemes:  # declared, none required
        console.print(labelled("security:", "none required"))
    for name, scheme in (card.security_schemes or {}).items():
        console.print(Text(f"  {name}: {describe_scheme(scheme)}", style="dim"))
    if not card.skills:
        console.print(labelled("skills:", "none"))
    for skill in card.skills:
        console.print(labelled(f"skill {skill.id}:", f"{skill.name} — {skill.description}"))
        for example in skill.examples or ():
            console.print(Text(f"  e.g. {example}", style="dim"))
    for extension in capabilities.extensions or ():
        required = " (required)" if extension.required else ""
        console.print(labelled(f"extension{required}:", extension.uri))
        if extension.description:
            console.print(Text(f"  {extension.description}", style="dim"))
        if extension.params:
            params = json.dumps(extension.params, ensure_ascii=False)
            console.print(Text(f"  params: {params}", style="dim"))


class View(Protocol):
    """How a command shows an answer: each event as it arrives, then `finish`."""

    def show(self, event: StreamEvent) -> None: ...

    def finish(self) -> None: ...


class JsonView:
    """Each object as one line of wire JSON (`--json`)."""

    def show(self, event: StreamEvent) -> None:
        print_json_line(event)

    def finish(self) -> None:
        pass


class ProtocolView:
    """The protocol as it happens (`--verbose`): task and context ids, every state, each part.

    A task shows its header, status message and artifacts (and its messages with
    `history`); status updates show their state; chunks of one artifact continue its line.
    """

    def __init__(
        self, console: Console, *, history: bool = False, save_dir: Path | None = None
    ) -> None:
        self.console = console
        self.history = history
        self.save_dir = save_dir
        """Where inline files are saved, as the conversation view does (None: named only)."""
        self._open_artifact: str | None = None
        self._open_with_text = False  # whether the open artifact's line ends in its text

    def show(self, event: StreamEvent) -> None:
        if isinstance(event, TaskArtifactUpdateEvent):
            self._show_chunk(event)
            return
        self.finish()
        if isinstance(event, Task):
            self._show_task(event)
        elif isinstance(event, TaskStatusUpdateEvent):
            self.console.print(state_text(event.status.state))
            show_status_message(self.console, event.status, self._file_text)
        else:
            show_message(self.console, event, self._file_text)

    def finish(self) -> None:
        """End the line of an artifact still being streamed."""
        if self._open_artifact is not None:
            self.console.print()
            self._open_artifact = None

    def _show_task(self, task: Task) -> None:
        self.console.print(task_header(task))
        if self.history:
            for message in task.history or ():
                show_message(self.console, message, self._file_text)
        show_status_message(self.console, task.status, self._file_text)
        for artifact in task.artifacts or ():
            text = artifact_text(artifact, self._file_text)
            self.console.print(labelled(f"{artifact_label(artifact)}:", text))

    def _show_chunk(self, event: TaskArtifactUpdateEvent) -> None:
        """A chunk continues its artifact's line when text follows text; a file or data part,
        and text after one, starts a line of its own."""
        artifact = event.artifact
        text = artifact_text(artifact, self._file_text)
        starts_with_text = bool(artifact.parts) and isinstance(artifact.parts[0], TextPart)
        if event.append and self._open_artifact == artifact.artifact_id:
            if not (starts_with_text and self._open_with_text):
                self.console.print()
            self.console.print(text, end="")
        else:
            self.finish()
            self.console.print(labelled(f"{artifact_label(artifact)}:", text), end="")
            self._open_artifact = artifact.artifact_id
        self._open_with_text = bool(artifact.parts) and isinstance(artifact.parts[-1], TextPart)
        if event.last_chunk:
            self.finish()

    def _file_text(self, part: FilePart) -> str:
        if self.save_dir is None or not isinstance(part.file, FileWithBytes):
            return describe_file(part)
        path = save_file(part.file, self.save_dir)
        return f"saved {path} ({human_size(path.stat().st_size)})"


def task_header(task: Task) -> Text:
    return Text.assemble(
        ("task ", "bold"),
        task.id,
        ("  context ", "bold"),
        task.context_id,
        "  ",
        state_text(task.status.state),
    )


def show_ending(console: Console, task: Task) -> None:
    """How a task ended, in brief: the agent's last words, if any, and the state."""
    if task.status.message is not None:
        console.print(parts_text(task.status.message.parts))
    state = task.status.state
    console.print(Text(f"({state.value})", style=_STATE_STYLES.get(state, "cyan")))


def show_message(
    console: Console, message: Message, file_text: Callable[[FilePart], str] = describe_file
) -> None:
    text = parts_text(message.parts, file_text=file_text)
    console.print(labelled(f"{message.role.value}:", text))


def show_status_message(
    console: Console, status: TaskStatus, file_text: Callable[[FilePart], str] = describe_file
) -> None:
    if status.message is not None:
        show_message(console, status.message, file_text)


def artifact_text(artifact: Artifact, file_text: Callable[[FilePart], str] = describe_file) -> str:
    """An artifact's content; its text parts are chunks of one text."""
    return parts_text(artifact.parts, text_joiner="", file_text=file_text)


def artifact_label(artifact: Artifact) -> str:
    return f"artifact {artifact.name}" if artifact.name else "artifact"
