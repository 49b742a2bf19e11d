"""The CLI's default output reads as a conversation: words, files, data, and states that matter."""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import accord
from accord.cli.main import app
from accord.types import DataPart, FilePart, FileWithBytes
from agents_for_tests import AsksThenCompletes, Raises
from live_server import serve_app


def invoke(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(app, list(args), input=stdin)


def said(agent: accord.Agent, *args: str) -> Result:
    """`accord send URL ARGS` to `agent`, served on loopback for the call."""
    with serve_app(agent.app()) as url:
        return invoke("send", url, *args)


class TwoArtifacts(accord.AgentExecutor):
    """Two artifacts, each streamed in two chunks without a newline, the second one named."""

    async def execute(self, context: accord.RequestContext, events: accord.EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        await task.start_work()
        first = await task.add_artifact("first ")
        await task.append_artifact(first, "half")
        second = await task.add_artifact("second ", name="notes.md")
        await task.append_artifact(second, "half", last_chunk=True)
        await task.complete()


FILE = FileWithBytes(bytes=base64.b64encode(b"hello file\n").decode(), name="hello.txt")


class SendsFilesAndData(accord.AgentExecutor):
    """A file (named with a path that must not escape the folder) and two kinds of data."""

    async def execute(self, context: accord.RequestContext, events: accord.EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        await task.start_work()
        await task.add_artifact([FilePart(file=FILE)])
        escaping = FILE.model_copy(update={"name": "../../escape.txt"})
        await task.add_artifact([FilePart(file=escaping)])
        await task.add_artifact([DataPart(data={"amount": 42.5, "currency": "EUR"})])
        await task.add_artifact([DataPart(data={"items": [1, 2], "total": {"n": 2}})])
        await task.complete()


@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
def test_separate_artifacts_start_on_lines_of_their_own(mode: str) -> None:
    result = said(accord.Agent(TwoArtifacts(), name="Two"), "go", mode)

    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["first half", "── notes.md", "second half"]


def test_appended_chunks_join_as_the_agent_wrote_them() -> None:
    from accord.samples import ticker

    result = said(ticker.agent, "3")

    assert result.exit_code == 0, result.stderr
    assert result.stdout == "tick 1\ntick 2\ntick 3\n"


@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
def test_files_are_saved_and_named_data_is_a_table_or_json(mode: str, tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("already here")
    agent = accord.Agent(SendsFilesAndData(), name="Files")

    result = said(agent, "go", mode, "--save-to", str(tmp_path))

    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "hello.txt").read_text() == "already here"  # never overwritten
    assert (tmp_path / "hello-2.txt").read_bytes() == b"hello file\n"
    assert (tmp_path / "escape.txt").read_bytes() == b"hello file\n"  # kept in the folder
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines[:2] == [
        f"saved {tmp_path / 'hello-2.txt'} (11 B)",
        f"saved {tmp_path / 'escape.txt'} (11 B)",
    ]
    assert lines[2:4] == ["amount    42.5", "currency  EUR"]
    assert (
        "\n".join(lines[4:])
        == '{\n  "items": [\n    1,\n    2\n  ],\n  "total": {\n    "n": 2\n  }\n}'
    )


def test_a_question_says_how_to_answer_and_the_answer_continues_the_task() -> None:
    asker = accord.Agent(AsksThenCompletes(), name="Asker")
    with serve_app(asker.app()) as url:
        question = invoke("send", url, "hi")
        match = re.search(r"--task-id (\S+)\)$", question.stdout.splitlines()[-1])
        assert match is not None, question.stdout
        answer = invoke("send", url, "Ada", "--task-id", match[1])

    assert question.exit_code == 5, question.stderr  # the task waits for input
    assert answer.exit_code == 0, answer.stderr
    assert question.stdout.splitlines() == [
        AsksThenCompletes.QUESTION,
        f"(waiting for your answer — answer with: accord send {url} TEXT --task-id {match[1]})",
    ]
    assert answer.stdout.splitlines() == ["── greeting", "Hello, Ada!"]


def test_a_failed_task_says_so() -> None:
    result = said(accord.Agent(Raises(RuntimeError("boom")), name="Broken"), "hi")

    assert result.exit_code == 3, result.stderr
    assert result.stdout.splitlines()[-1] == "(failed)"


def test_a_plain_reply_is_just_its_words() -> None:
    from accord.samples import echo

    result = said(echo.message_agent, "just this")

    assert result.stdout == "just this\n"


def test_get_shows_who_said_what_and_the_state() -> None:
    asker = accord.Agent(AsksThenCompletes(), name="Asker")
    with serve_app(asker.app()) as url:
        first = invoke("send", url, "hi", "--json")
        task_id = re.search(r'"id":"([^"]+)"', first.stdout)
        assert task_id is not None
        invoke("send", url, "Ada", "--task-id", task_id[1])
        shown = invoke("get", url, task_id[1])

    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        "you: hi",
        f"Asker: {AsksThenCompletes.QUESTION}",
        "you: Ada",
        "── greeting",
        "Hello, Ada!",
        "(completed)",
    ]


@accord.agent(name="Counter")
async def counter(context: accord.RequestContext) -> AsyncIterator[str]:
    parts = len(context.message.parts)
    yield f"{parts} parts, task {context.task_id}, context {context.context_id}"


def test_chat_commands_stay_in_the_chat(tmp_path: Path) -> None:
    attached = tmp_path / "note.txt"
    attached.write_text("n")
    lines = [
        "/help",
        "/nonsense",
        "one",
        f"/file {attached}",
        '/data {"n": 1}',
        "two",
        "/new",
        "//three",
        "/quit",
        "never sent",
    ]
    with serve_app(counter.app()) as url:
        result = invoke("chat", url, stdin="".join(line + "\n" for line in lines))

    assert result.exit_code == 0, result.stderr
    out = result.stdout.splitlines()
    assert "/new        start a new conversation (a new context)" in out
    assert "unknown command '/nonsense': /help lists the commands" in out
    replies = [line for line in out if " parts, task " in line]
    counts = [reply.split(" parts")[0] for reply in replies]
    contexts = [reply.rsplit("context ", 1)[1] for reply in replies]
    assert counts == ["1", "3", "1"]  # the file and the data went with "two" only
    assert contexts[0] == contexts[1] != contexts[2]  # /new began another context
    assert "you> three" not in out and "you> //three" in out  # // sends a line starting with /


def test_chat_task_shows_the_current_task() -> None:
    asker = accord.Agent(AsksThenCompletes(), name="Asker")
    with serve_app(asker.app()) as url:
        result = invoke("chat", url, stdin="hi\n/task\n/cancel\n/task\n")

    out = result.stdout.splitlines()
    assert result.exit_code == 4, result.stderr  # piped: the last task was canceled
    assert re.fullmatch(r"task \S+ in context \S+", out[out.index("you: hi") - 1])
    assert "(canceled)" in out
    assert out.count("(waiting for your answer)") == 2  # the turn, and the first /task
    assert out[-1] == "(canceled)"
