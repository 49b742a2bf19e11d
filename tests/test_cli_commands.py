"""The CLI's commands and their help: shared agent options, tasks, card, serve's checks."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner, Result

import accord
from accord.cli.main import COMMANDS as ROOT_COMMANDS
from accord.cli.main import LazyCommands, app
from accord.types import Task, TaskState
from agents_for_tests import AsksThenCompletes
from live_server import serve_app
from served_process import accord_command, free_port

COMMANDS = [
    *("registry serve", "registry add", "registry remove", "registry search", "registry show"),
    *("serve", "db upgrade", "host", "card show", "card verify", "send", "chat", "get"),
    *("cancel", "tasks", "ui", "demo", "keys new", "keys list", "keys rotate"),
    *("push listen", "push set", "push get", "push list", "push delete"),
    "mcp serve",
]
TALKING = [
    *("card show", "send", "chat", "get", "cancel", "tasks"),
    *("push set", "push get", "push list", "push delete"),
]


def invoke(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(app, list(args), input=stdin)


def help_of(command: str) -> str:
    result = invoke(*command.split(), "--help", stdin=None)
    assert result.exit_code == 0, result.output
    return result.stdout


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture(scope="module")
def asker_url() -> Iterator[str]:
    with serve_app(accord.Agent(AsksThenCompletes(), name="Asker").app()) as url:
        yield url


# --- help ------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_flags_as_flags_and_placeholders_in_capitals(command: str) -> None:
    text = help_of(command)

    assert "<bool>" not in text
    assert not [line for line in text.splitlines() if line.endswith("-")]  # no word cut in two
    usage = text.splitlines()[0]
    assert re.fullmatch(
        r"Usage: accord [a-z ]+ \[OPTIONS\]( \{[A-Z_:]+\}(\.\.\.)?)*( \[[A-Z_]+\])?", usage
    ), usage
    arguments = text.split("Arguments:")[1].split("Options:")[0] if "Arguments:" in text else ""
    assert "<" not in arguments  # `URL  The agent's...`, not typer's `URL <str>`
    options = re.findall(r"^  (?:-\w, )?(--[a-z-]+)(?: (\S+))?  ", text, flags=re.MULTILINE)
    assert options
    for name, placeholder in options:
        assert placeholder in ("", "/") or placeholder.isupper(), name  # --port PORT


def test_summaries_are_whole_sentences() -> None:
    text = help_of("")  # the root's help lists every command with its first sentence
    summaries = text.split("Commands:")[1].split("Exit status:")[0].strip().splitlines()
    assert len(summaries) >= 8
    assert all(line.endswith(".") and not line.endswith("...") for line in summaries)


def test_send_help_offers_stream_and_no_stream() -> None:
    assert "--stream / --no-stream" in help_of("send")


def test_accord_version() -> None:
    result = invoke("--version")

    assert result.exit_code == 0
    assert result.stdout == f"accord {accord.__version__}\n"


@pytest.mark.parametrize("width", [40, 80, 120])
def test_the_root_help_lists_each_command_as_the_command_itself_would(width: int) -> None:
    root = typer.main.get_command(app)
    assert isinstance(root, LazyCommands)
    context = typer.Context(root, info_name="accord", terminal_width=width)
    listed, loaded = context.make_formatter(), context.make_formatter()

    root.format_commands(context, listed)  # from the table, nothing loaded
    for name in ROOT_COMMANDS:
        root.get_command(context, name)
    TyperGroup.format_commands(root, context, loaded)  # click's own, from each loaded command

    assert listed.getvalue() == loaded.getvalue()
    assert list(root.commands) == list(ROOT_COMMANDS)


@pytest.mark.processes
def test_the_root_help_loads_no_command_and_no_client() -> None:
    script = (
        "import sys\n"
        "from accord.cli.main import main\n"
        "sys.argv = ['accord', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(name for name in sys.modules if name.startswith('accord'))))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )

    loaded = found.stdout.splitlines()[-1].split()
    assert loaded == [
        *("accord", "accord.cli", "accord.cli.credentials", "accord.cli.exit_codes"),
        *("accord.cli.main", "accord.lazy_exports"),
    ]


def test_an_unknown_command_is_refused_with_the_commands_there_are() -> None:
    result = invoke("sned")

    assert result.exit_code == 2
    assert "No such command 'sned'" in result.stderr


@pytest.mark.parametrize("command", TALKING)
def test_every_command_that_talks_to_an_agent_has_the_same_options(command: str) -> None:
    found = typer.main.get_command(app)
    for name in command.split():  # `card show`: the command `show` of the group `card`
        found = found.get_command(typer.Context(found), name)  # type: ignore[attr-defined]
    params = {p.name: p for p in found.params}

    assert params["url"].metavar == "URL"
    assert {"transport", "version", "header", "extension", "api_key", "bearer", "cert"} <= set(
        params
    )
    assert params["transport"].opts == ["--transport"] and params["version"].opts == ["--version"]


# --- the options at work ---------------------------------------------------------------------


@pytest.mark.parametrize(("transport", "version"), [("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")])
def test_get_and_cancel_use_the_interface_asked_for(
    asker_url: str, transport: str, version: str
) -> None:
    sent = invoke("send", asker_url, "hi", "--json", "--transport", transport)
    task = Task.model_validate_json(sent.stdout)
    options = ["--transport", transport, "--version", version]

    got = invoke("get", asker_url, task.id, "--json", *options)
    canceled = invoke("cancel", asker_url, task.id, "--json", *options)
    unknown = invoke("get", asker_url, task.id, "--transport", "CARRIER-PIGEON")

    assert got.exit_code == 0, got.stderr
    assert Task.model_validate_json(got.stdout).status.state is TaskState.INPUT_REQUIRED
    assert Task.model_validate_json(canceled.stdout).status.state is TaskState.CANCELED
    assert unknown.exit_code == 1
    assert "offers no CARRIER-PIGEON" in one_error_line(unknown.stderr)


def test_tasks_lists_and_filters(asker_url: str) -> None:
    first = Task.model_validate_json(invoke("send", asker_url, "a", "--json").stdout)
    again = invoke("send", asker_url, "b", "--json", "--context-id", first.context_id)
    second = Task.model_validate_json(again.stdout)
    invoke("send", asker_url, "Ada", "--task-id", second.id)

    listed = invoke("tasks", asker_url, "--context-id", first.context_id)
    waiting = invoke(
        "tasks", asker_url, "--context-id", first.context_id, "--state", "input-required", "--json"
    )

    assert listed.exit_code == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["task", "state", "context", "updated"]
    assert [row.split()[:3] for row in rows] == [
        [second.id, "completed", first.context_id],
        [first.id, "input-required", first.context_id],
    ]
    assert [json.loads(line)["id"] for line in waiting.stdout.splitlines()] == [first.id]


def test_tasks_pages_and_says_how_to_go_on(asker_url: str) -> None:
    context = Task.model_validate_json(invoke("send", asker_url, "x", "--json").stdout).context_id
    invoke("send", asker_url, "y", "--context-id", context)

    page = invoke("tasks", asker_url, "--context-id", context, "--limit", "1")
    token = re.search(r"--page-token (\S+)\)$", page.stdout.splitlines()[-1])
    assert token is not None, page.stdout
    rest = invoke("tasks", asker_url, "--context-id", context, "--page-token", token[1])

    assert len(rest.stdout.splitlines()) == 2  # the header and the other task


def test_tasks_needs_a_version_with_list_tasks(asker_url: str) -> None:
    result = invoke("tasks", asker_url, "--version", "0.3")
    bad_state = invoke("tasks", asker_url, "--state", "sleeping")

    assert result.exit_code == 1
    assert one_error_line(result.stderr) == (
        f"error: listing tasks needs A2A 1.0; {asker_url}/ speaks 0.3"
    )
    assert bad_state.exit_code == 2
    assert one_error_line(bad_state.stderr).startswith("error: --state must be one of submitted,")


def test_card_lists_the_extensions() -> None:
    from accord.samples import echo

    with serve_app(echo.agent.app()) as url:
        result = invoke("card", url)

    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "extension: urn:accord:ext:timing:v1" in lines
    assert '  params: {"clock": "UTC"}' in lines


def test_card_not_found_names_both_paths(asker_url: str) -> None:
    result = invoke("card", asker_url + "/nope")

    assert result.exit_code == 1
    assert one_error_line(result.stderr) == (
        f"error: no agent card at {asker_url}/nope: GET {asker_url}/nope/.well-known/"
        f"agent-card.json and {asker_url}/nope/.well-known/agent.json answered HTTP 404"
    )


# --- serve -----------------------------------------------------------------------------------


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=60, check=False, cwd=cwd)


@pytest.mark.processes
def test_serve_on_a_taken_port_says_who_holds_it(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        command = accord_command("serve", "accord.samples.echo:agent", "--port", str(port))
        result = run(*command, cwd=tmp_path)  # its default store opens before the port check

    assert result.returncode == 1
    line = one_error_line(result.stderr)
    assert line.startswith(
        f"error: port {port} on 127.0.0.1 is already in use by pid {os.getpid()} ("
    )
    assert line.endswith("; stop that or choose another port with --port")


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            "import accord\n\nagent = accord.Agent(MyExecutor(), name='x')\n",
            "NameError: name 'MyExecutor' is not defined ({path}, line 3)",
        ),
        ("def broken(:\n", "SyntaxError: invalid syntax ({path}, line 1)"),
        (
            "import no_such_dependency_here\n",
            "ModuleNotFoundError: No module named 'no_such_dependency_here' ({path}, line 1)",
        ),
    ],
    ids=["name", "syntax", "dependency"],
)
@pytest.mark.processes
def test_serve_says_in_one_line_why_a_module_does_not_import(
    tmp_path: Path, source: str, reason: str
) -> None:
    (tmp_path / "mine.py").write_text(source)

    result = run(*accord_command("serve", "mine:agent", "--port", str(free_port())), cwd=tmp_path)

    assert result.returncode == 2
    path = tmp_path / "mine.py"
    assert (
        one_error_line(result.stderr) == f"error: cannot import 'mine': {reason.format(path=path)}"
    )


@pytest.mark.processes
def test_serve_names_the_agents_a_module_has(tmp_path: Path) -> None:
    (tmp_path / "two.py").write_text(
        "from accord.samples.echo import agent as echo\n"
        "from accord.samples.ticker import agent as ticks\n"
    )

    result = run(*accord_command("serve", "two:agent", "--port", str(free_port())), cwd=tmp_path)

    assert result.returncode == 2
    assert one_error_line(result.stderr) == (
        f"error: module 'two' ({tmp_path / 'two.py'}) has no attribute 'agent';"
        " its agents: two:echo, two:ticks"
    )


GREETER = """
import accord

@accord.agent(name="Greeter")
def greeter(context: accord.RequestContext) -> str:
    return "Hello, " + context.text

if __name__ == "__main__":
    greeter.serve({arguments})
"""


@pytest.mark.processes
def test_agent_serve_says_where_and_where_tasks_are_kept(tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / "greeter.py").write_text(GREETER.format(arguments=f"port={port}"))
    process = subprocess.Popen(
        [sys.executable, "greeter.py"], cwd=tmp_path, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        first, second = process.stderr.readline(), process.stderr.readline()
        url = f"http://127.0.0.1:{port}"
        again = run(sys.executable, "greeter.py", cwd=tmp_path)  # finds the port taken
        sent = _wait_and_send(url)
    finally:
        process.terminate()
        process.wait(timeout=30)

    assert first == f"accord: serving Greeter at {url} (card: {url}/.well-known/agent-card.json)\n"
    assert second == "accord: tasks are kept in sqlite:///.accord/greeter.db\n"
    assert (tmp_path / ".accord" / "greeter.db").exists()  # as `accord serve` keeps them
    assert sent == "Hello, Ada\n"
    assert again.returncode == 1
    assert f"is already in use by pid {process.pid} (" in one_error_line(again.stderr)


def _wait_and_send(url: str) -> str:
    deadline = time.monotonic() + 60  # a loaded machine may take long to start a server
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/.well-known/agent-card.json")
            break
        except httpx.TransportError:
            time.sleep(0.05)
    result = invoke("send", url, "Ada")
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.mark.processes
def test_agent_serve_reads_the_port_from_the_environment(tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / "greeter.py").write_text(GREETER.format(arguments="store='memory'"))
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        result = subprocess.run(
            [sys.executable, "greeter.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, "ACCORD_PORT": str(port)},
        )

    assert result.returncode == 1
    assert one_error_line(result.stderr).startswith(
        f"error: port {port} on 127.0.0.1 is already in use"
    )


def test_help_paragraphs_are_rewrapped_not_broken_where_the_source_breaks() -> None:
    result = CliRunner().invoke(app, ["serve", "--help"], terminal_width=400, max_content_width=400)

    paragraphs = result.stdout.split("\n\n")
    assert paragraphs[2].strip().startswith("JSON-RPC answers at /")
    assert len(paragraphs[2].strip().splitlines()) == 1  # one line when the terminal is wide


def test_tasks_on_an_agent_without_a_1_0_interface_says_what_it_offers() -> None:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    card: dict[str, object] = {
        "name": "Old",
        "description": "speaks 0.3 only",
        "url": "",
        "version": "1",
        "protocolVersion": "0.3.0",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }

    async def card_endpoint(request: object) -> JSONResponse:
        return JSONResponse(card)

    old = Starlette(routes=[Route("/.well-known/agent-card.json", card_endpoint)])
    with serve_app(old) as url:
        card["url"] = url + "/"
        result = invoke("tasks", url)

    assert result.exit_code == 1
    assert one_error_line(result.stderr) == (
        "error: listing tasks needs an A2A 1.0 interface: agent 'Old' offers no 1.0"
        f" (it offers: JSONRPC 0.3.0 at {url}/)"
    )
