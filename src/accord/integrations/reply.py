"""How a framework run answers over A2A: its text streamed as chunks of an artifact, its steps
(tool calls, handoffs) as status notes, files and structured data as artifacts of their own."""

from __future__ import annotations

from typing import Any

from accord.agents import Content, EventSink, RequestContext, TaskUpdater
from accord.integrations.content import data_part
from accord.types import DataPart, Part, TaskState, TextPart

TEXT_ARTIFACT = "response"
"""The name of the artifact a run's text goes in."""


class Reply:
    """The events of one run of a framework agent, sent through a `TaskUpdater`."""

    def __init__(self, context: RequestContext, events: EventSink) -> None:
        self.updater = TaskUpdater(context, events)
        self._text_id: str | None = None
        self._streamed: list[str] = []
        self.sent_anything = False

    async def start(self) -> None:
        """The task is being worked on."""
        await self.updater.start_work()

    async def text_chunk(self, text: str) -> None:
        """One more piece of the text being streamed (an artifact begun by the first)."""
        if not text:
            return
        self._text_id = await self.updater.add_artifact(
            text, artifact_id=self._text_id, name=TEXT_ARTIFACT, append=self._text_id is not None
        )
        self._streamed.append(text)
        self.sent_anything = True

    async def text(self, text: str) -> None:
        """A whole text: what the stream has sent of it already is not sent again."""
        streamed = "".join(self._streamed)
        if not text.startswith(streamed):
            self.end_text()
            streamed = ""
        await self.text_chunk(text[len(streamed) :])

    def end_text(self) -> None:
        """The text streamed so far is complete: the next text starts an artifact of its own."""
        self._text_id = None
        self._streamed = []

    async def artifact(self, content: Content, *, name: str | None = None) -> None:
        """An artifact of its own: a file, a structured result."""
        await self.updater.add_artifact(content, name=name)
        self.sent_anything = True

    async def data(self, value: object, *, name: str = "result") -> None:
        """A structured result, as a DataPart."""
        await self.artifact(data_part(value), name=name)

    async def note(self, text: str, data: dict[str, Any] | None = None) -> None:
        """A step of the run, as a `working` status whose message says what happens."""
        parts: list[Part] = [TextPart(text=text)]
        if data is not None:
            parts.append(DataPart(data=data))
        await self.updater.update_status(TaskState.WORKING, parts)

    async def ask(self, content: Content) -> None:
        """The run waits for the caller's answer: the task is `input-required`."""
        await self.updater.requires_input(content)

    async def complete(self) -> None:
        """The run is over."""
        await self.updater.complete()
