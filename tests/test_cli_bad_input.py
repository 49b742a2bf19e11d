"""Every command given malformed URLs, ports, hosts and options: one line and an exit code,
never a traceback; the demo's ports; Ctrl-C during a send."""

from __future__ import annotations

import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import accord
from accord.cli import demo
from accord.cli.errors import BadArgument
from accord.cli.main import app
from accord.cli.options import agent_url, headers_of, metadata_of
from agents_for_tests import GatedStreamer
from live_server import serve_app
from served_process import accord_command

BAD_URLS = [
    "http://127.0.0.1:99999",
    "http://127.0.0.1:-1",
    "http://127.0.0.1:abc",
    "http://[::1",
    "http://:80",
    "ftp://example.com",
    "127.0.0.1:8000",
    "",
    "http://exa mple.com",
]
TALKING = [
    ["card"],
    ["card", "show"],
    ["send", "{url}", "hi"],
    ["chat"],
    ["get", "{url}", "t1"],
    ["cancel", "{url}", "t1"],
    ["tasks"],
    ["push", "set", "{url}", "t1", "http://example.com/hook"],
    ["push", "get", "{url}", "t1", "c1"],
    ["push", "list", "{url}", "t1"],
    ["push", "delete", "{url}", "t1", "c1"],
]
BAD_OPTIONS = [
    ["serve", "accord.samples.echo:agent", "--port", "99999"],
    ["serve", "accord.samples.echo:agent", "--port", "-5"],
    ["serve", "accord.samples.echo:agent", "--port", "http"],
    ["serve", "accord.samples.echo:agent", "--host", "exa mple", "--port", "1"],
    ["serve", "accord.samples.echo:agent", "--grpc-port", "99999"],
    ["serve", "accord.samples.echo:agent", "--store", "bogus://x"],
    ["serve", "no_such_module:agent"],
    ["serve", "not-a-target"],
    ["host", "--port", "99999"],
    ["ui", "--port", "70000"],
    ["demo", "--first-port", "99999"],
    ["demo", "--port", "-1"],
    ["push", "listen", "--agent", "http://127.0.0.1:1", "--port", "99999"],
    ["push", "failures", "--store", "postgresql://nobody@127.0.0.1:99999/x"],
    ["push", "retry", "--store", "bogus://"],
    ["db", "upgrade", "--store", "sqlite+nothing://"],
    ["keys", "new", "--alg", "XS999"],
    ["keys", "rotate", "--grace", "forever"],
    ["card", "verify", "http://127.0.0.1:99999"],
    ["card", "verify", "http://127.0.0.1:1", "--jwks", "not a url"],
    ["send", "http://127.0.0.1:1", "hi", "--data", "[1"],
    ["send", "http://127.0.0.1:1", "hi", "--file", "/nonexistent/file"],
    ["send", "http://127.0.0.1:1", "hi", "--metadata", "{"],
    ["send", "http://127.0.0.1:1", "hi", "--header", "nope"],
    ["send", "http://127.0.0.1:1"],
    ["send", "https://127.0.0.1:1", "hi", "--cert", "/nonexistent.pem"],
    ["send", "https://127.0.0.1:1", "hi", "--ca", "/nonexistent.pem"],
    ["--basic", "nocolon", "send", "http://127.0.0.1:1", "hi"],
    ["--client-id", "only", "send", "http://127.0.0.1:1", "hi"],
    ["tasks", "http://127.0.0.1:1", "--state", "sleepy"],
    ["tasks", "http://127.0.0.1:1", "--limit", "0"],
    ["get", "http://127.0.0.1:1", "t", "--history", "-1"],
]


def _cases() -> Iterator[list[str]]:
    for command in TALKING:
        for url in BAD_URLS:
            args = [part.replace("{url}", url) for part in command]
            yield args if "{url}" in command else [*args, url]
    yield from BAD_OPTIONS


CASES = list(_cases())


@pytest.mark.parametrize("args", CASES, ids=" ".join)
def test_bad_input_is_one_line_and_an_exit_code_never_a_traceback(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args, input="")

    assert isinstance(result.exception, SystemExit | None), result.exception  # nothing raised
    assert result.exit_code in (1, 2, 7), result.output
    assert "Traceback" not in result.output
    error_lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert 1 <= len(error_lines) <= 3, result.stderr  # click adds its usage lines


@pytest.mark.processes
def test_the_bad_url_of_the_report_is_one_line_in_a_real_process() -> None:
    found = subprocess.run(
        accord_command("send", "http://127.0.0.1:99999", "hi"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert found.returncode == 2
    assert found.stderr.splitlines() == [
        "error: URL 'http://127.0.0.1:99999': a port is a number from 1 to 65535"
    ]


# --- the demo's ports --------------------------------------------------------------------------


def test_a_port_in_time_wait_is_free_for_the_demo() -> None:
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn's
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        served, _ = listener.accept()
        served.close()  # the server's side closes first: its port goes to TIME_WAIT
        client.close()
    with socket.socket() as plain, pytest.raises(OSError):
        plain.bind(("127.0.0.1", port))  # what the demo's check did: "in use"

    assert demo._is_free(port)


@pytest.mark.processes
def test_make_demo_passes_the_first_port() -> None:
    root = Path(__file__).resolve().parents[1]
    shown = subprocess.run(
        ["make", "-n", "-C", str(root), "demo", "DEMO_FIRST_PORT=9101", "DEMO_PORT=9100"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    assert "accord demo --port 9100 --first-port 9101" in shown


# --- Ctrl-C during a send ------------------------------------------------------------------------


@pytest.mark.processes
def test_ctrl_c_during_send_leaves_the_task_running_and_says_how_to_reach_it() -> None:
    streamer = GatedStreamer()
    agent = accord.Agent(streamer, name="Streamer")
    with serve_app(agent.app()) as url:
        process = subprocess.Popen(
            accord_command("send", url, "hi", "--verbose"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        header = process.stdout.readline()  # the task, as the stream begins
        task_id = header.split()[1]
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        with accord.SyncClient(url) as client:
            state = client.get_task(task_id).status.state
        streamer.release_all()

    assert process.returncode == 130
    assert f"interrupted: task {task_id} goes on at the agent." in stderr
    assert f"accord send {url} --resume {task_id}" in stderr
    assert f"accord cancel {url} {task_id}" in stderr
    assert "Traceback" not in stderr
    assert state == "working"


def test_resume_and_text_go_one_at_a_time() -> None:
    neither = CliRunner().invoke(app, ["send", "http://127.0.0.1:1"])
    both = CliRunner().invoke(app, ["send", "http://127.0.0.1:1", "hi", "--resume", "t"])

    assert neither.exit_code == both.exit_code == 2
    assert "--resume TASK_ID" in neither.stderr


def test_send_resume_follows_a_task_to_its_end() -> None:
    streamer = GatedStreamer()
    agent = accord.Agent(streamer, name="Streamer")
    with serve_app(agent.app()) as url, accord.SyncClient(url) as client:
        task = client.send("hi", blocking=False)
        streamer.release_all()  # finished or not when followed, it ends completed
        result = CliRunner().invoke(app, ["send", url, "--resume", task.id, "--verbose"])

    assert result.exit_code == 0, result.output
    assert "[completed]" in result.stdout


@given(st.text(max_size=60))
def test_any_url_header_or_metadata_text_is_taken_or_refused_in_words(text: str) -> None:
    for parse in (agent_url, lambda t: headers_of([t]), metadata_of):
        try:
            parse(text)
        except BadArgument as exc:
            assert str(exc) and "\n" not in str(exc).strip()
