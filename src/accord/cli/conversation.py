"""The CLI's default view of an answer: the agent's words as they stream, a quiet status line.

Text streams in place (an artifact's appended chunks continue its text; another artifact or
message starts on a line of its own), files are saved and named, data shows as a table or
indented JSON. While the task works a spinner says so on a terminal; it leaves no trace, so
what stays on the screen is what a pipe gets. Interrupted and unsuccessful ends get a short
line; a completed task needs none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console, RenderableType
from rich.status import Status
from rich.text import Text

from accord.cli.content import data_view, describe_file, human_size, save_file
from accord.cli.forms import form_of, form_view
from accord.cli.interrupts import interrupts_held
from accord.types import (
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

_ENDINGS = {
    TaskState.INPUT_REQUIRED: ("waiting for your answer", "magenta"),
    TaskState.AUTH_REQUIRED: ("waiting for you to authenticate", "magenta"),
    TaskState.FAILED: ("failed", "red"),
    TaskState.REJECTED: ("rejected", "red"),
    TaskState.CANCELED: ("canceled", "yellow"),
}
_BUSY = frozenset({TaskState.SUBMITTED, TaskState.WORKING})


@dataclass(frozen=True, slots=True)
class ViewSettings:
    """How the conversation view presents an answer."""

    agent_name: str = "the agent"
    save_dir: Path | None = Path()
    """Where files the agent sends are saved (None: they are only named)."""
    reply_hint: str | None = None
    """Said after an interrupted task's state; `{task_id}` is filled in."""
    show_history: bool = False
    """Show a task's messages (for `accord get`), each with who said it."""
    always_show_state: bool = False


class ConversationView:
    """Shows one answer (a task or a message, or the events of a stream) as a conversation."""

    def __init__(
        self,
        console: Console,
        settings: ViewSettings | None = None,
        shown_messages: set[str] | None = None,
    ) -> None:
        self.console = console
        self.settings = settings if settings is not None else ViewSettings()
        self.shown_messages = shown_messages if shown_messages is not None else set()
        """Ids of the messages shown already (a chat shares them across turns): each shows once."""
        self.task_id: str | None = None
        self.state: TaskState | None = None
        self._shown_parts: dict[str, int] = {}  # artifact id -> parts already shown
        self._open_artifact: str | None = None  # whose text the cursor stands after
        self._line_open = False
        self._status: Status | None = None
        self._activity = f"{self.settings.agent_name} is working"
        self._continued: str | None = None
        self._text_files: dict[str, tuple[str, str, list[str]]] = {}  # id: name, type, text
        self._saved_files: set[str] = set()

    def continuing(self, task_id: str) -> None:
        """The answer continues this task: its question, in the stream's first snapshot of
        the task, was the previous turn's and is not shown again."""
        self._continued = task_id

    def waiting(self) -> None:
        """Show the spinner until the first event arrives (a terminal only)."""
        self._spin()

    def show(self, event: StreamEvent) -> None:
        if isinstance(event, TaskArtifactUpdateEvent):
            if not self._written_file(event.artifact, event.append, event.last_chunk):
                self._show_chunk(event.artifact, append=bool(event.append))
        elif isinstance(event, TaskStatusUpdateEvent):
            self._show_status(event.task_id, event.status)
        elif isinstance(event, Task):
            self._show_task(event)
        else:
            self._show_message(event)
        if self.state in _BUSY and not self._line_open:
            self._spin()

    def finish(self) -> None:
        """Stop the spinner, end the line the last text left open, and write the text files
        still open (their last chunk never came)."""
        self._quiet()
        self._end_line()
        for artifact_id in list(self._text_files):
            self._save_text_file(artifact_id)

    # --- events --------------------------------------------------------------------------

    def _show_task(self, task: Task) -> None:
        if task.id == self._continued:
            self._continued = None
            if task.status.message is not None:
                self.shown_messages.add(task.status.message.message_id)
            self.task_id, self.state = task.id, task.status.state
        if self.settings.show_history:
            for message in task.history or ():
                self._show_message(message, speaker=True)
        for artifact in task.artifacts or ():
            if artifact.artifact_id in self._saved_files:
                continue
            if not self._written_file(artifact, append=False, last_chunk=True):
                self._show_chunk(artifact, append=False)
        self._show_status(task.id, task.status)

    def _show_status(self, task_id: str, status: TaskStatus) -> None:
        changed = status.state is not self.state
        self.task_id, self.state = task_id, status.state
        message = status.message
        if message is not None and not self._first_sight(message):
            message = None
        if message is not None and status.state in _BUSY:
            self._activity = _plain_text(message.parts) or self._activity
            self._write_block(Text(self._activity, style="dim"))
        elif message is not None:
            self._print_message(message)
        repeated = status.message is not None and message is None  # shown in an earlier turn
        if (changed and not repeated) or message is not None:
            self._show_ending(status.state)

    def _show_message(self, message: Message, *, speaker: bool = False) -> None:
        if self._first_sight(message):
            self._print_message(message, speaker=speaker)

    def _print_message(self, message: Message, *, speaker: bool = False) -> None:
        self._quiet()
        self._end_line()
        if speaker:
            who = "you" if message.role is Role.USER else self.settings.agent_name
            self.console.print(Text(f"{who}: ", style="bold"), end="")
            self._line_open = True
        self._show_parts(message.parts)
        self._end_line()

    def _first_sight(self, message: Message) -> bool:
        """Whether `message` is new here (a continued task repeats its question, for one)."""
        if message.message_id in self.shown_messages:
            return False
        self.shown_messages.add(message.message_id)
        return True

    def _written_file(
        self, artifact: Artifact, append: bool | None, last_chunk: bool | None
    ) -> bool:
        """Whether `artifact` (or this chunk of it) is a text file being written: an artifact
        named like a file whose metadata gives its media type (the coder sample's), all text.
        Its chunks are gathered and saved as the file once the last one came."""
        known = self._text_files.get(artifact.artifact_id)
        if known is None and not append:
            mime_type = (artifact.metadata or {}).get("mimeType")
            texts = [p.text for p in artifact.parts if isinstance(p, TextPart)]
            named = artifact.name is not None and "." in Path(artifact.name).name
            if not (named and isinstance(mime_type, str) and len(texts) == len(artifact.parts)):
                return False
            known = self._text_files[artifact.artifact_id] = (artifact.name or "", mime_type, [])
        elif known is None:
            return False
        known[2].extend(p.text for p in artifact.parts if isinstance(p, TextPart))
        if last_chunk:
            self._save_text_file(artifact.artifact_id)
        return True

    def _save_text_file(self, artifact_id: str) -> None:
        name, mime_type, texts = self._text_files.pop(artifact_id)
        self._saved_files.add(artifact_id)
        self._show_parts([FilePart.from_bytes("".join(texts).encode(), name, mime_type)])

    def _show_chunk(self, artifact: Artifact, *, append: bool) -> None:
        """An artifact, or parts appended to one: its text continues, anything else starts anew.

        A task brings its artifacts whole, so of an artifact already shown (streamed before
        the task arrived) only the parts not yet shown appear.
        """
        self._quiet()
        seen = self._shown_parts.get(artifact.artifact_id)
        if seen is None or self._open_artifact != artifact.artifact_id:
            self._end_line()
        if seen is None and artifact.name:
            self.console.print(Text(f"── {artifact.name}", style="dim"))
        parts = artifact.parts if append or seen is None else artifact.parts[seen:]
        self._shown_parts[artifact.artifact_id] = (seen or 0) + len(parts)
        self._show_parts(parts)
        self._open_artifact = artifact.artifact_id if self._line_open else None

    def _show_parts(self, parts: list[Part]) -> None:
        for part in parts:
            if isinstance(part, TextPart):
                self._write_text(part.text)
            elif isinstance(part, DataPart):
                form = form_of(part.data)
                self._write_block(form_view(form) if form is not None else data_view(part.data))
            elif isinstance(part.file, FileWithBytes) and self.settings.save_dir is not None:
                path = save_file(part.file, self.settings.save_dir)
                size = human_size(path.stat().st_size)
                self._write_block(Text(f"saved {path} ({size})", style="bold"))
            else:
                self._write_block(Text(describe_file(part)))

    def _show_ending(self, state: TaskState) -> None:
        ending = _ENDINGS.get(state)
        if ending is None and self.settings.always_show_state and state not in _BUSY:
            ending = (state.value, "green")
        if ending is None:
            return
        words, style = ending
        if state.is_interrupted and self.settings.reply_hint and self.task_id:
            words += " — " + self.settings.reply_hint.format(task_id=self.task_id)
        self._write_block(Text(f"({words})", style=style))

    # --- the screen ----------------------------------------------------------------------

    def _write_text(self, text: str) -> None:
        if text:
            self.console.print(text, end="", markup=False, highlight=False)
            self._line_open = not text.endswith("\n")

    def _write_block(self, renderable: RenderableType) -> None:
        self._quiet()
        self._end_line()
        self.console.print(renderable)

    def _end_line(self) -> None:
        if self._line_open:
            self.console.print()
            self._line_open = False
        self._open_artifact = None

    def _spin(self) -> None:
        if not self.console.is_terminal:
            return
        words = f"{self._activity}…"
        if self._status is None:
            self._status = self.console.status(Text(words, style="dim"), spinner="dots")
            with interrupts_held():
                self._status.start()
        else:
            self._status.update(Text(words, style="dim"))

    def _quiet(self) -> None:
        if self._status is not None:
            status, self._status = self._status, None
            with interrupts_held():
                status.stop()


def _plain_text(parts: list[Part]) -> str:
    return " ".join(part.text for part in parts if isinstance(part, TextPart)).strip()
