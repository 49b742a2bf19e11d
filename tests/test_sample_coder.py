"""The coder sample: each file streamed as chunks of its own artifact, in order, and runnable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import accord
from accord.samples import coder
from accord.samples.coder import TEMPLATES, CoderAgent, Template
from accord.types import TaskArtifactUpdateEvent, TaskState
from conftest import SchemaErrors
from sample_servers import (
    artifact_updates,
    check_card,
    finished,
    follow,
    statuses,
    talk_to,
    task_id_of,
)
from served_process import STARTUP_TIMEOUT

PYTHON_TODO = next(t for t in TEMPLATES if t.id == "python-todo")


def fast_coder() -> accord.Agent:
    """The coder sample without its pauses between chunks."""
    return accord.Agent(CoderAgent(chunk_delay=0), name="Coder")


def files_streamed(updates: list[TaskArtifactUpdateEvent]) -> list[tuple[str, list[str]]]:
    """Each artifact's name and chunks, in the order the artifacts started.

    Checks the chunking: the first chunk of a file starts its artifact (no `append`), every
    later one appends to it, and only the last says `lastChunk`.
    """
    files: dict[str, tuple[str, list[TaskArtifactUpdateEvent]]] = {}
    for update in updates:
        artifact = update.artifact
        files.setdefault(artifact.artifact_id, (artifact.name or "", []))[1].append(update)
    streamed = []
    for name, chunks in files.values():
        assert not chunks[0].append
        assert chunks[0].artifact.metadata == {"mimeType": coder.mime_type(name)}
        assert all(chunk.append for chunk in chunks[1:])
        assert [chunk.last_chunk for chunk in chunks] == [False] * (len(chunks) - 1) + [True]
        streamed.append((name, [chunk.artifact.text for chunk in chunks]))
    return streamed


async def test_card_validates_and_describes_the_skill(schema_errors: SchemaErrors) -> None:
    card = await check_card(coder.agent, schema_errors)
    assert "text/x-python" in card["defaultOutputModes"]


@pytest.mark.parametrize("template", TEMPLATES, ids=[t.id for t in TEMPLATES])
def test_every_template_file_is_there_and_parses(template: Template) -> None:
    for path in template.paths:
        source = template.source(path)
        assert source.strip(), path
        if path.endswith(".py"):
            compile(source, path, "exec")
        elif path.endswith(".json"):
            json.loads(source)


async def test_each_file_streams_in_order_as_chunks_that_join_into_the_file() -> None:
    async with talk_to(fast_coder()) as client:
        events = await follow(client, "a CLI todo app in python")
        streamed = files_streamed(artifact_updates(events))
        assert [name for name, _ in streamed] == list(PYTHON_TODO.paths)
        for name, chunks in streamed:
            assert "".join(chunks) == PYTHON_TODO.source(name)
        assert max(len(chunks) for _, chunks in streamed) > 2

        progress = [text for state, text in statuses(events) if state is TaskState.WORKING]
        assert progress[1:] == [
            f"Writing {path} ({number} of 4)" for number, path in enumerate(PYTHON_TODO.paths, 1)
        ]
        assert statuses(events)[-1] == (
            TaskState.COMPLETED,
            "Wrote a CLI todo app in Python: README.md, store.py, todo.py, test_todo.py.",
        )
        task = finished(await client.get_task(task_id_of(events)))
    assert task.artifacts is not None
    assert {a.name: a.text for a in task.artifacts} == {
        path: PYTHON_TODO.source(path) for path in PYTHON_TODO.paths
    }


@pytest.mark.processes
async def test_the_python_todo_app_it_writes_runs_and_passes_its_tests(tmp_path: Path) -> None:
    async with talk_to(fast_coder()) as client:
        task = finished(await client.send("write me a todo list app in Python"))
    assert task.artifacts is not None
    for artifact in task.artifacts:
        (tmp_path / (artifact.name or "")).write_text(artifact.text, encoding="utf-8")

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=STARTUP_TIMEOUT,
            check=True,
        )
        return done.stdout + done.stderr

    assert run("todo.py", "add", "buy", "milk") == "Added #1: buy milk\n"
    run("todo.py", "done", "1")
    assert run("todo.py", "list") == "1. [x] buy milk\n"
    assert "OK" in run("-m", "unittest", "-q")


async def test_a_language_it_cannot_write_is_asked_about_then_the_answer_used() -> None:
    async with talk_to(fast_coder()) as client:
        asked = finished(await client.send("a todo app in Rust"), TaskState.INPUT_REQUIRED)
        assert asked.status.message is not None
        assert asked.status.message.text == (
            "I can write a CLI todo app in Python or JavaScript, not in Rust. "
            "Which language should it be?"
        )
        done = finished(await client.send("JavaScript then", task_id=asked.id))
    assert done.artifacts is not None
    assert [a.name for a in done.artifacts] == ["README.md", "package.json", "store.js", "todo.js"]


async def test_a_request_for_nothing_it_knows_is_asked_about() -> None:
    async with talk_to(fast_coder()) as client:
        asked = finished(await client.send("hello there"), TaskState.INPUT_REQUIRED)
    assert asked.status.message is not None
    assert asked.status.message.text.startswith("What should I write? I can write a CLI todo app")


@pytest.mark.parametrize(
    ("request_text", "template_id"),
    [
        ("a CLI todo app in python", "python-todo"),
        ("a to-do list in node.js", "javascript-todo"),
        ("a small REST API", "python-api"),
        ("a landing page", "web-page"),
        ("a todo web page", "web-page"),
    ],
)
def test_rules_choose_a_template(request_text: str, template_id: str) -> None:
    chosen = coder.choose(coder.parse(request_text))
    assert isinstance(chosen, Template) and chosen.id == template_id
