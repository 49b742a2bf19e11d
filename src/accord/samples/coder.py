"""Coder: writes a small multi-file program — streaming artifacts in chunks.

Shows: each file as an artifact of its own, named by its path, with its mime type in the
artifact's metadata, streamed in chunks (`append=True` on every chunk after the first,
`lastChunk=True` on the last); progress as `working` status updates; `input-required` when
the request does not say what to write. The programs come from templates shipped with
accord (`templates/`), so the same request always gives the same files.

    accord serve accord.samples.coder:agent
    accord send http://127.0.0.1:8000 "a CLI todo app in python" --stream
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import accord
from accord import language
from accord.agents import EventSink
from accord.types import AgentSkill, Role, TaskState, TextPart

CHUNK_LINES = 8
MIME_TYPES = {
    ".py": "text/x-python", ".js": "text/javascript", ".json": "application/json",
    ".md": "text/markdown", ".html": "text/html", ".css": "text/css",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Template:
    """A program the agent can write: what it is, in which language, and its files in order."""

    id: str
    kind: str
    what: str
    language: str
    paths: tuple[str, ...]

    @property
    def summary(self) -> str:
        return f"{self.what} in {self.language}"

    def source(self, path: str) -> str:
        """The text of one of the template's files."""
        return _read(f"templates/{self.id}/{path}.tmpl")


@cache
def _read(name: str) -> str:
    return resources.files("accord.samples").joinpath(name).read_text("utf-8")


TEMPLATES = [
    Template("python-todo", "todo", "a CLI todo app", "Python",
             ("README.md", "store.py", "todo.py", "test_todo.py")),
    Template("javascript-todo", "todo", "a CLI todo app", "JavaScript",
             ("README.md", "package.json", "store.js", "todo.js")),
    Template("python-api", "api", "a JSON HTTP API for notes", "Python",
             ("README.md", "notes.py", "app.py")),
    Template("web-page", "page", "a static web page", "HTML, CSS and JavaScript",
             ("index.html", "style.css", "script.js")),
]  # fmt: skip

KIND_WORDS = {  # checked in this order: "a todo web page" is a page
    "page": r"web ?page|website|landing page|html|home ?page",
    "api": r"api|server|http|rest|backend|web service",
    "todo": r"to-?do|task list|checklist",
}
LANGUAGE_WORDS = {
    "Python": r"python|py", "JavaScript": r"javascript|js|node(?:\.?js)?", "HTML": r"html",
    "Rust": r"rust", "Go": r"golang|(?<=in )go|(?<=using )go", "Java": r"java",
    "Ruby": r"ruby", "C": r"c|c\+\+|c#", "TypeScript": r"typescript|ts", "Kotlin": r"kotlin",
    "Swift": r"swift", "PHP": r"php",
}  # fmt: skip
INSTRUCTIONS = (
    "Read a request for a small program. Answer with JSON: "
    '{"kind": "todo" (a to-do list app), "api" (an HTTP API) or "page" (a web page), or '
    'null; "language": the programming language named, or null}.'
)
OFFER = "I can write " + "; ".join(t.summary for t in TEMPLATES) + "."


@dataclass(frozen=True, slots=True)
class Request:
    """What to write: the kind of program and the language, where the user said."""

    kind: str | None
    language: str | None


def parse(text: str) -> Request:
    """Read a request by rules: the first kind of program named, the last language named."""
    lowered = text.lower()
    kind = next(
        (k for k, words in KIND_WORDS.items() if re.search(rf"\b({words})\b", lowered)), None
    )
    named = [
        (found.start(), name)
        for name, words in LANGUAGE_WORDS.items()
        for found in re.finditer(rf"(?<![\w+#])({words})(?![\w+#])", lowered)
    ]
    return Request(kind, max(named)[1] if named else None)


def from_model(answer: Mapping[str, Any]) -> Request:
    kind, language_name = answer.get("kind"), answer.get("language")
    if kind is not None and kind not in KIND_WORDS:
        raise ValueError(f"unknown kind {kind!r}")
    if language_name is not None and not isinstance(language_name, str):
        raise ValueError(f"language {language_name!r} is not a name")
    named = parse(language_name).language if language_name else None  # "node" is JavaScript
    return Request(kind, named or language_name or None)


def choose(request: Request) -> Template | str:
    """The template that fits `request`, or the question to ask the user."""
    if request.kind is None:
        return f"What should I write? {OFFER}"
    fitting = [t for t in TEMPLATES if t.kind == request.kind]
    if request.language is None:
        return fitting[0]
    for template in fitting:
        if template.kind == "page" or template.language == request.language:
            return template
    languages = " or ".join(t.language for t in fitting)
    return (
        f"I can write {fitting[0].what} in {languages}, not in {request.language}. "
        "Which language should it be?"
    )


def conversation(context: accord.RequestContext) -> str:
    """Everything the user said in this task, oldest first (answers refine the request)."""
    history = context.task.history or [] if context.task is not None else []
    earlier = [
        m.text
        for m in history
        if m.role is Role.USER and m.message_id != context.message.message_id
    ]
    return "\n".join([*earlier, context.text])


def chunks(text: str, lines: int = CHUNK_LINES) -> list[str]:
    """`text` in pieces of at most `lines` lines (at least one piece)."""
    split = text.splitlines(keepends=True)
    return ["".join(split[i : i + lines]) for i in range(0, len(split), lines)] or [""]


def mime_type(path: str) -> str:
    return next((m for suffix, m in MIME_TYPES.items() if path.endswith(suffix)), "text/plain")


class CoderAgent(accord.AgentExecutor):
    """Writes the files of a template, each streamed as chunks of its own artifact.

    `chunk_delay` seconds pass between chunks, so a person watching sees the files grow.
    """

    def __init__(self, chunk_delay: float = 0.05) -> None:
        self.chunk_delay = chunk_delay

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        said = conversation(context)
        await task.start_work("Reading your request")
        request = await language.understand(
            said, instructions=INSTRUCTIONS, rules=parse, from_model=from_model
        )
        template = choose(request)
        if isinstance(template, str):
            await task.requires_input(template)
            return
        total = len(template.paths)
        for number, path in enumerate(template.paths, start=1):
            await task.update_status(TaskState.WORKING, f"Writing {path} ({number} of {total})")
            pieces = chunks(template.source(path))
            artifact_id = None
            for index, piece in enumerate(pieces):
                if index:
                    await asyncio.sleep(self.chunk_delay)
                artifact_id = await task.add_artifact(
                    TextPart(text=piece),
                    artifact_id=artifact_id,
                    name=path,
                    metadata={"mimeType": mime_type(path)} if index == 0 else None,
                    append=index > 0,
                    last_chunk=index == len(pieces) - 1,
                )
        await task.complete(f"Wrote {template.summary}: {', '.join(template.paths)}.")


agent = accord.Agent(
    CoderAgent(),
    name="Coder",
    description="Writes small multi-file programs, streaming each file as it goes.",
    skills=[
        AgentSkill(
            id="write_program",
            name="Write a small program",
            description=(
                "Writes a small program of several files from a request: a CLI todo app "
                "(Python or JavaScript), a JSON HTTP API (Python) or a static web page."
            ),
            tags=["code", "streaming", "files"],
            examples=["a CLI todo app in python", "a todo app in javascript", "a web page"],
        )
    ],
    input_modes=["text/plain"],
    output_modes=["text/plain", *sorted(set(MIME_TYPES.values()))],
)
