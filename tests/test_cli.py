"""The `accord` command line, run for real: a served agent in a subprocess, and each command."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from typer.testing import CliRunner, Result

import accord
from accord.cli.errors import BadArgument
from accord.cli.main import app
from accord.cli.serve import load_app
from accord.errors import UnsupportedOperation
from accord.samples import echo
from accord.types import AgentCard, DataPart, FilePart, FileWithBytes, Task, TaskState, TextPart
from agents_for_tests import AsksThenCompletes, Raises, Switchboard
from live_server import serve_app
from served_process import accord_command, accord_serve, free_port

ASGI_APP = echo.message_agent.app()
"""An ASGI app for `accord serve test_cli:ASGI_APP`."""

TASK_HEADER = re.compile(r"^task (?P<task>\S+)  context (?P<context>\S+)  \[(?P<state>[a-z-]+)\]$")


def not_an_app(name: str) -> str:
    """A callable that is neither an Agent nor an ASGI app."""
    return name


def run_accord(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a subprocess, as a user would."""
    return subprocess.run(
        accord_command(*args),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def invoke(*args: str, stdin: str | None = None) -> Result:
    """Run the CLI in this process (for commands that need no server of their own)."""
    return CliRunner().invoke(app, list(args), input=stdin)


@pytest.fixture(scope="module")
def served_echo() -> Iterator[str]:
    """`accord serve accord.samples.echo:agent` in a subprocess; yields its URL."""
    with accord_serve("accord.samples.echo:agent", "--store", "memory") as served:
        yield served.url


def headers(output: str) -> list[dict[str, str]]:
    """The task header lines of human-readable output."""
    lines = output.splitlines()
    return [m.groupdict() for line in lines if (m := TASK_HEADER.match(line))]


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# --- serve and send, as subprocesses ---------------------------------------------------------


def test_send_shows_the_agents_words(served_echo: str) -> None:
    result = run_accord("send", served_echo, "hello there")

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == "hello there\n"


def test_send_verbose_shows_the_task(served_echo: str) -> None:
    result = run_accord("send", served_echo, "hello there", "--no-stream", "--verbose")

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    [header] = headers(result.stdout)
    assert header["state"] == "completed"
    assert "artifact: hello there" in result.stdout.splitlines()


def test_send_stream_shows_each_event_as_it_arrives(served_echo: str) -> None:
    result = run_accord("send", served_echo, "hello stream", "--stream", "-v")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert TASK_HEADER.match(lines[0])
    assert headers(result.stdout)[0]["state"] == "submitted"
    assert lines[1:] == ["[working]", "artifact: hello stream", "[completed]"]


def test_send_json_prints_the_wire_task(served_echo: str) -> None:
    result = run_accord("send", served_echo, "as json", "--json")

    assert result.returncode == 0, result.stderr
    [line] = result.stdout.splitlines()
    task = Task.model_validate_json(line)
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts is not None
    assert task.artifacts[0].parts == [TextPart(text="as json")]
    assert json.loads(line)["contextId"] == task.context_id  # wire names


def test_send_stream_json_prints_one_event_per_line(served_echo: str) -> None:
    result = run_accord("send", served_echo, "events", "--stream", "--json")

    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [event["kind"] for event in events] == [
        "task",
        "status-update",
        "artifact-update",
        "status-update",
    ]
    assert events[-1]["status"]["state"] == "completed" and events[-1]["final"] is True


def test_console_script_entry_point(served_echo: str) -> None:
    script = Path(sys.executable).with_name("accord")
    result = subprocess.run(
        [str(script), "card", served_echo, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert AgentCard.model_validate_json(result.stdout).name == "Echo"


def test_chat_through_stdin_keeps_the_context(served_echo: str) -> None:
    result = run_accord("chat", served_echo, "-v", stdin="first line\nsecond line\n")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines.index("artifact: first line") < lines.index("artifact: second line")
    first, second = headers(result.stdout)
    assert first["context"] == second["context"]
    assert first["task"] != second["task"]  # the first task completed: a new one begins


@pytest.mark.processes
def test_serve_unknown_module_fails_with_one_line() -> None:
    result = run_accord("serve", "no_such_module_here:agent", "--port", str(free_port()))

    assert result.returncode == 2
    assert one_error_line(result.stderr).startswith(
        "error: no module named 'no_such_module_here' (looked in "
    )


# --- the other commands, in process against the served agent ---------------------------------


def test_send_attaches_files_and_data(served_echo: str, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"remember the milk\n")

    result = invoke(
        "send",
        served_echo,
        "see attached",
        "--file",
        str(notes),
        "--data",
        '{"n": 1}',
        "--json",
    )

    assert result.exit_code == 0, result.stderr
    task = Task.model_validate_json(result.stdout)
    assert task.history is not None
    parts = task.history[0].parts
    encoded = base64.b64encode(b"remember the milk\n").decode()
    assert parts[1:] == [
        FilePart(file=FileWithBytes(bytes=encoded, name="notes.txt", mime_type="text/plain")),
        DataPart(data={"n": 1}),
    ]


@accord.agent(name="Chunker")
async def chunker(context: accord.RequestContext) -> AsyncIterator[str]:
    for word in context.text.split():
        yield word + " "


@pytest.mark.parametrize("mode", [[], ["--stream"]], ids=["send", "stream"])
def test_chunks_of_an_artifact_read_as_one_text(mode: list[str]) -> None:
    with serve_app(chunker.app()) as url:
        result = invoke("send", url, "one two three", *mode)
        verbose = invoke("send", url, "one two three", "-v", *mode)

    assert result.exit_code == 0, result.stderr
    assert result.stdout == "one two three \n"
    assert "artifact: one two three " in verbose.stdout.splitlines()


def test_card_shows_the_essentials(served_echo: str) -> None:
    result = invoke("card", served_echo)

    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Echo 1.0.0"
    assert f"url: {served_echo}/" in lines
    assert "capabilities: streaming" in lines


def test_card_json_prints_the_card(served_echo: str) -> None:
    result = invoke("card", served_echo, "--json")

    assert result.exit_code == 0, result.stderr
    card = AgentCard.model_validate_json(result.stdout)
    assert card.name == "Echo"
    assert card.capabilities.streaming is True


def sent_task(url: str, text: str) -> Task:
    result = invoke("send", url, text, "--json")
    assert result.exit_code in (0, 5), result.stderr  # 5: the task waits for input
    return Task.model_validate_json(result.stdout)


def test_get_shows_a_task_with_its_history(served_echo: str) -> None:
    task = sent_task(served_echo, "look me up")

    human = invoke("get", served_echo, task.id, "--verbose")
    wire = invoke("get", served_echo, task.id, "--history", "0", "--json")

    assert human.exit_code == 0, human.stderr
    assert headers(human.stdout) == [
        {"task": task.id, "context": task.context_id, "state": "completed"}
    ]
    assert "user: look me up" in human.stdout.splitlines()
    assert wire.exit_code == 0, wire.stderr
    fetched = Task.model_validate_json(wire.stdout)
    assert fetched.id == task.id and fetched.history is None


def test_cancel_of_a_completed_task_fails(served_echo: str) -> None:
    task = sent_task(served_echo, "already done")

    result = invoke("cancel", served_echo, task.id)

    assert result.exit_code == 1
    assert result.stdout == ""
    line = one_error_line(result.stderr)
    assert line.startswith("error -32002 (TaskNotCancelable): ")
    assert task.id in line


def test_cancel_of_a_running_task() -> None:
    agent = accord.Agent(AsksThenCompletes(), name="Asker")
    with serve_app(agent.app()) as url:
        waiting = sent_task(url, "hi")
        result = invoke("cancel", url, waiting.id, "--json")

    assert waiting.status.state is TaskState.INPUT_REQUIRED
    assert result.exit_code == 0, result.stderr
    assert Task.model_validate_json(result.stdout).status.state is TaskState.CANCELED


def test_get_of_an_unknown_task_fails(served_echo: str) -> None:
    result = invoke("get", served_echo, "no-such-task")

    assert result.exit_code == 1
    assert one_error_line(result.stderr) == (
        "error -32001 (TaskNotFound): no task with id 'no-such-task'"
    )


def test_unreachable_url_fails_with_one_line() -> None:
    url = f"http://127.0.0.1:{free_port()}"

    result = invoke("send", url, "hello?")

    assert result.exit_code == 7  # unreachable
    line = one_error_line(result.stderr)
    assert line.startswith(f"error: cannot connect to {url}/.well-known/agent-card.json")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("{not json", "error: --data is not valid JSON: "),
        ("[1, 2]", "error: --data must be a JSON object, got an array"),
        ('"text"', "error: --data must be a JSON object, got a string"),
    ],
)
def test_bad_data_fails_before_sending(data: str, reason: str) -> None:
    unreachable = f"http://127.0.0.1:{free_port()}"  # never contacted

    result = invoke("send", unreachable, "hi", "--data", data)

    assert result.exit_code == 2
    assert one_error_line(result.stderr).startswith(reason)


def test_missing_file_fails_before_sending(tmp_path: Path) -> None:
    missing = tmp_path / "missing.pdf"

    result = invoke("send", f"http://127.0.0.1:{free_port()}", "hi", "--file", str(missing))

    assert result.exit_code == 2
    assert one_error_line(result.stderr) == (
        f"error: cannot read --file {missing}: No such file or directory"
    )


# --- serve: what it accepts ------------------------------------------------------------------


def test_serve_accepts_an_agent_or_an_asgi_app() -> None:
    assert isinstance(load_app("accord.samples.echo:agent"), Starlette)
    assert load_app("test_cli:ASGI_APP") is ASGI_APP


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("accord.samples.echo", "expected MODULE:ATTRIBUTE"),
        ("accord.samples.echo:nothing", "has no attribute 'nothing'; its agents: "),
        ("accord.samples.echo:accord", "is a module, not an accord.Agent or an ASGI app"),
        ("test_cli:not_an_app", "is a function, not an accord.Agent or an ASGI app"),
    ],
)
def test_serve_rejects_what_it_cannot_serve(target: str, reason: str) -> None:
    with pytest.raises(BadArgument, match=re.escape(reason)):
        load_app(target)

    result = invoke("serve", target)
    assert result.exit_code == 2
    assert reason in one_error_line(result.stderr)


# --- chat ------------------------------------------------------------------------------------


def chat_with(agent: accord.Agent, lines: list[str]) -> tuple[Result, list[dict[str, Any]]]:
    with serve_app(agent.app()) as url:
        result = invoke("chat", url, "-v", stdin="".join(line + "\n" for line in lines))
    return result, headers(result.stdout)


def test_chat_continues_a_task_that_asks_for_input() -> None:
    asker = accord.Agent(AsksThenCompletes(), name="Asker")

    result, turns = chat_with(asker, ["hi", "Ada", "hello again"])

    assert result.exit_code == 5, result.stderr  # piped: the last task waits for an answer
    lines = result.stdout.splitlines()
    assert lines[0] == "Talking to Asker. /help for commands, Ctrl-D to leave."
    assert "artifact greeting: Hello, Ada!" in lines
    assert lines.count(f"agent: {AsksThenCompletes.QUESTION}") >= 2  # the snapshot repeats it
    first, answer, third = turns
    assert answer["task"] == first["task"]  # the answer continued the waiting task
    assert answer["state"] == "input-required"
    assert third["task"] != first["task"]  # after completion a new task begins
    assert {first["context"], answer["context"], third["context"]} == {first["context"]}


def test_chat_without_streaming_sends_and_stops_at_quit() -> None:
    @accord.agent(name="Parrot", streaming=False)
    def parrot(context: accord.RequestContext) -> str:
        return f"{context.text} (context {context.context_id})"

    result, _ = chat_with(parrot, ["polly", "cracker", "/quit", "never sent"])

    assert result.exit_code == 0, result.stderr
    replies = [line for line in result.stdout.splitlines()[1:] if not line.startswith("you> ")]
    assert [reply.split(" (")[0] for reply in replies] == ["agent: polly", "agent: cracker"]
    assert len({reply.split(" (")[1] for reply in replies}) == 1  # one context for the chat


def test_chat_reports_a_failed_turn_and_goes_on() -> None:
    refusing = Raises(UnsupportedOperation("not this one"), after_start=False)
    switchboard = Switchboard({"refuse": refusing}, default=echo.agent.executor)

    result, turns = chat_with(accord.Agent(switchboard, name="Picky"), ["refuse me", "fine"])

    assert result.exit_code == 0
    assert one_error_line(result.stderr) == "error -32004 (UnsupportedOperation): not this one"
    assert "artifact: fine" in result.stdout.splitlines()
    assert [turn["state"] for turn in turns] == ["submitted"]


def test_chat_with_an_unreachable_agent_fails() -> None:
    result = invoke("chat", f"http://127.0.0.1:{free_port()}", stdin="hi\n")

    assert result.exit_code == 7
    assert one_error_line(result.stderr).startswith("error: cannot connect to ")


def test_serve_rejects_an_unknown_log_level() -> None:
    result = invoke("serve", "accord.samples.echo:agent", "--log-level", "loud")

    assert result.exit_code == 2
    assert one_error_line(result.stderr).startswith("error: --log-level must be one of ")
