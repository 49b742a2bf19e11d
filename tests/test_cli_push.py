"""`accord push` and `accord send --push-url`, run for real: a served agent, a listening
receiver that verifies what it prints, and the config commands."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from typer.testing import CliRunner

from accord import Agent
from accord.cli.main import app
from accord.keys import KeyStore
from accord.keys.cards import JWKS_PATH
from accord.keys.notifications import DELIVERY_ID_HEADER, SIGNATURE_HEADER, sign_notification
from accord.samples.echo import agent as echo
from agents_for_tests import SAFETY_TIMEOUT
from live_server import serve_app
from served_process import TESTS_DIR, accord_command, accord_serve, free_port

PUSHING_ECHO = Agent(echo.executor, name="Pushing echo", push_notifications=True)
"""For `accord serve test_cli_push:PUSHING_ECHO`."""

pytestmark = pytest.mark.processes


def run_accord(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        accord_command(*args), capture_output=True, text=True, timeout=60, check=False, cwd=cwd
    )


@contextmanager
def listening(*args: str) -> Iterator[tuple[int, queue.Queue[str], list[str]]]:
    """`accord push listen ARGS --port P`: its port, its stdout lines as they come, its stderr."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(TESTS_DIR)}
    process = subprocess.Popen(
        accord_command("push", "listen", *args, "--port", str(port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    errors: list[str] = []
    assert process.stdout is not None and process.stderr is not None
    readers = [
        threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True),  # type: ignore[union-attr]
        threading.Thread(target=lambda: errors.extend(process.stderr), daemon=True),  # type: ignore[arg-type]
    ]
    for reader in readers:
        reader.start()
    try:
        deadline = time.monotonic() + SAFETY_TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, "".join(errors)
                assert time.monotonic() < deadline, "accord push listen did not start"
                time.sleep(0.05)
        yield port, lines, errors
    finally:
        process.terminate()
        process.wait(timeout=SAFETY_TIMEOUT)


def next_line(lines: queue.Queue[str]) -> str:
    return lines.get(timeout=SAFETY_TIMEOUT).rstrip("\n")


@pytest.fixture(scope="module")
def agent_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    keys = tmp_path_factory.mktemp("keys") / "store"
    args = ("test_cli_push:PUSHING_ECHO", "--store", "memory", "--keys", str(keys))
    with accord_serve(*args, "--push-allow", "127.0.0.1") as served:
        yield served.url


def test_push_listen_prints_each_verified_notification(agent_url: str) -> None:
    with listening("--agent", agent_url, "--token", "s3cret") as (port, lines, errors):
        hook = f"http://127.0.0.1:{port}/"
        sent = run_accord("send", agent_url, "hello", "--push-url", hook, "--push-token", "s3cret")
        assert sent.returncode == 0, sent.stderr
        printed = [next_line(lines)]
        while not printed[-1].endswith("completed"):
            printed.append(next_line(lines))
        forged = httpx.post(hook, content=b"{}", headers={"X-A2A-Notification-Token": "s3cret"})
    task_ids = {line.split(":")[0] for line in printed}
    assert len(task_ids) == 1 and next(iter(task_ids)).startswith("task ")
    # A 1.0 webhook (the CLI speaks 1.0) gets every event, as a stream does.
    assert [line.split(": ", 1)[1] for line in printed] == [
        "task submitted",
        "status working",
        "artifact " + printed[2].rsplit(" ", 1)[1],
        "status completed",
    ]
    assert forged.status_code == 401
    assert any("refused: the X-A2A-Notification-Signature header is missing" in e for e in errors)


def test_push_listen_closes_a_connection_asking_to_upgrade(agent_url: str) -> None:
    """The webhook applies the server's connection limits: a request asking to upgrade
    (which uvicorn's own handshake would hold open forever) is answered and closed."""
    with (
        listening("--agent", agent_url) as (port, _lines, _errors),
        socket.create_connection(("127.0.0.1", port), timeout=SAFETY_TIMEOUT) as connection,
    ):
        connection.sendall(
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nContent-Length: 2\r\n\r\n{}"
        )
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 4"), answer


def test_push_set_get_list_delete(agent_url: str) -> None:
    sent = run_accord("send", agent_url, "keep me", "--json")
    task_id = json.loads(sent.stdout)["id"]
    hook = "https://hooks.example/accord"
    created = run_accord("push", "set", agent_url, task_id, hook, "--token", "t", "--id", "h1")
    assert created.returncode == 0, created.stderr
    config = json.loads(created.stdout)
    assert config["pushNotificationConfig"]["url"] == hook
    assert json.loads(run_accord("push", "get", agent_url, task_id, "h1").stdout) == config
    listed = run_accord("push", "list", agent_url, task_id).stdout.splitlines()
    assert [json.loads(line) for line in listed] == [config]
    deleted = run_accord("push", "delete", agent_url, task_id, "h1")
    assert deleted.returncode == 0 and run_accord("push", "list", agent_url, task_id).stdout == ""

    refused = run_accord("push", "set", agent_url, task_id, "http://169.254.169.254/")
    assert refused.returncode == 1
    assert "cloud metadata" in refused.stderr and "Traceback" not in refused.stderr


def test_serve_refuses_a_bad_push_allow_entry(tmp_path: Path) -> None:
    result = run_accord(
        "serve", "accord.samples.echo:agent", "--push-allow", "nonsense", cwd=tmp_path
    )
    assert result.returncode == 2
    assert "--push-allow" in result.stderr and "'nonsense'" in result.stderr
    assert list(tmp_path.iterdir()) == []  # refused before any store or key was made


def test_push_listen_shows_a_notification_delivered_twice_once() -> None:
    keys = KeyStore.ephemeral()
    agent = Starlette(routes=[Route(JWKS_PATH, lambda _: JSONResponse(keys.jwks()))])
    task = {"id": "t-1", "contextId": "c", "kind": "task", "status": {"state": "working"}}
    body = json.dumps(task).encode()
    with serve_app(agent) as agent_url, listening("--agent", agent_url) as (port, lines, _):
        hook = f"http://127.0.0.1:{port}/"

        def post(delivery_id: str) -> int:
            signature = sign_notification(
                keys.active(), issuer=agent_url, audience=hook, task_id="t-1", body=body
            )  # each try is signed anew; its delivery id stays
            headers = {SIGNATURE_HEADER: signature, DELIVERY_ID_HEADER: delivery_id}
            return httpx.post(hook, content=body, headers=headers).status_code

        assert [post("d-1"), post("d-1"), post("d-2")] == [204, 204, 204]
        printed = [next_line(lines), next_line(lines)]
        with pytest.raises(queue.Empty):
            lines.get(timeout=0.5)
    assert printed == ["task t-1: task working"] * 2  # d-1 once, then d-2


def test_push_listen_asks_again_later_while_the_agent_keys_cannot_be_fetched() -> None:
    """An agent that is down (restarting, say) says nothing against its notification: 503, so
    the agent tries again later, where 401 would park the notification for good."""
    keys = KeyStore.ephemeral()
    agent_url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    body = json.dumps({"id": "t-1", "contextId": "c", "kind": "task"}).encode()
    with listening("--agent", agent_url) as (port, lines, errors):
        hook = f"http://127.0.0.1:{port}/"
        signature = sign_notification(
            keys.active(), issuer=agent_url, audience=hook, task_id="t-1", body=body
        )
        answer = httpx.post(hook, content=body, headers={SIGNATURE_HEADER: signature})
        assert (answer.status_code, answer.headers.get("retry-after")) == (503, "5")
        unsigned = httpx.post(hook, content=body)  # wrong whoever the agent is: refused
        assert unsigned.status_code == 401
        with pytest.raises(queue.Empty):
            lines.get(timeout=0.2)
    assert any("cannot verify now" in line for line in errors), errors


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        ((), "name the deliveries to retry, or give --all"),
        (("--all", "some-delivery"), "(not both)"),
        (("--task", "some-task"), "--task goes with --all"),
    ],
)
def test_push_retry_says_what_it_needs(
    args: tuple[str, ...], complaint: str, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path}/accord.db"
    result = CliRunner().invoke(app, ["push", "retry", *args, "--store", store])
    assert result.exit_code == 2 and complaint in result.stderr
    assert list(tmp_path.iterdir()) == []  # refused before the store was opened
