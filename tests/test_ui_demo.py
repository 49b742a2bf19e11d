"""`accord demo`: the samples (and the host, when installed), the UI; one URL; Ctrl-C stops all."""

from __future__ import annotations

import importlib.util
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from accord import create_app
from accord.samples import echo
from live_server import serve_app
from ui_pages import ui_client

pytestmark = pytest.mark.processes

START_TIMEOUT = 90.0
SAMPLE_NAMES = ["Currency", "Expense", "Image", "Movies", "Coder"]
HAS_HOST = importlib.util.find_spec("accord.host") is not None


@dataclass
class Demo:
    process: subprocess.Popen[str]
    state_dir: Path
    ui: str
    services: dict[str, str]
    output: list[str] = field(default_factory=list)

    def state(self) -> dict[str, list[dict[str, object]]]:
        with ui_client(self.ui) as api:
            state: dict[str, list[dict[str, object]]] = api.get("/api/state").json()
        return state


@contextmanager
def demo(state_dir: Path, *flags: str) -> Iterator[Demo]:
    command = [sys.executable, "-m", "accord", "demo", "--first-port", "0", "--port", "0"]
    process = subprocess.Popen(
        [*command, "--state-dir", str(state_dir), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    watchdog = threading.Timer(START_TIMEOUT, process.kill)  # only guards a hang
    watchdog.start()
    output: list[str] = []
    services: dict[str, str] = {}
    assert process.stdout is not None
    try:
        for line in process.stdout:
            output.append(line)
            if found := re.match(r"  (\w+)\s+(http://127\.0\.0\.1:\d+)$", line.rstrip()):
                services[found[1]] = found[2]
            if found := re.search(r"open (http://127\.0\.0\.1:\d+)/", line):
                break
        else:
            pytest.fail("accord demo did not start:\n" + "".join(output))
    finally:
        watchdog.cancel()
    reader = threading.Thread(target=lambda: output.extend(process.stdout or ()), daemon=True)
    reader.start()
    started = Demo(process, state_dir, found[1], services, output)
    try:
        yield started
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def wait_for(check: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(check) and check():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def refuses(url: str) -> bool:
    try:
        httpx.get(url + "/.well-known/agent-card.json", timeout=2)
    except httpx.ConnectError:
        return True
    return False


@pytest.fixture(scope="module")
def full_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    """One demo as `make demo` starts it (the host too, when installed), shared by the tests
    below; the last one stops it."""
    with demo(tmp_path_factory.mktemp("demo")) as running:
        yield running


def test_demo_serves_the_samples_and_the_ui(full_demo: Demo) -> None:
    running = full_demo
    samples = {n: url for n, url in running.services.items() if n not in ("host", "registry")}
    assert sorted(samples) == sorted(n.lower() for n in SAMPLE_NAMES)
    known = 1 + len(SAMPLE_NAMES) if HAS_HOST else len(SAMPLE_NAMES)
    wait_for(lambda: len(running.state()["agents"]) >= known, "the UI to know the samples")
    names = [a["name"] for a in running.state()["agents"]]
    assert names[known - len(SAMPLE_NAMES) : known] == SAMPLE_NAMES
    page = httpx.get(running.ui + "/")
    assert page.status_code == 200 and "/static/app.js" in page.text

    with ui_client(running.ui) as api:
        sent = api.post("/api/send", json={"agent": samples["currency"], "text": "100 USD to EUR"})
    assert sent.status_code == 202
    wait_for(
        lambda: [t["state"] for t in running.state()["tasks"]] == ["completed"],
        "the conversion to complete",
    )
    for name in running.services:
        assert (running.state_dir / f"{name}.db").is_file(), f"{name} has its own SQLite store"
    assert (running.state_dir / "currency.db").stat().st_size > 0


@pytest.mark.skipif(
    not HAS_HOST, reason="accord.host (the multi-agent host) is not in this build yet"
)
def test_demo_registers_the_samples_with_the_host(full_demo: Demo) -> None:
    running = full_demo
    host = running.services["host"]
    wait_for(lambda: len(running.state()["agents"]) >= 6, "the UI to know the host and samples")
    assert running.state()["agents"][0]["url"] == host
    listed = httpx.get(host + "/host/agents").json()
    assert sorted(entry["name"] for entry in listed) == sorted(SAMPLE_NAMES)
    # The UI holds the token of this run: an agent added there is registered with the host.
    with serve_app(create_app(echo.agent)) as echo_url, ui_client(running.ui) as api:
        added = api.post("/api/agents", json={"url": echo_url}, timeout=30)
        assert added.status_code == 201, added.text
        assert [r["error"] for r in added.json()["hosts"]] == [None]
    assert "Echo" in [entry["name"] for entry in httpx.get(host + "/host/agents").json()]
    refused = httpx.post(host + "/host/agents", json={"url": echo_url})
    assert refused.status_code == 401, "only the UI, holding the token, changes them"


def test_demo_adds_the_samples_to_a_registry_the_ui_shows(full_demo: Demo) -> None:
    registry = full_demo.services["registry"]
    kept = httpx.get(registry + "/registry/agents").json()
    assert sorted(agent["name"] for agent in kept["agents"]) == sorted(SAMPLE_NAMES)
    with ui_client(full_demo.ui) as api:
        shown = api.get("/api/registry", params={"q": "convert currencies"}).json()
    assert shown["registry"] == registry
    assert [agent["name"] for agent in shown["agents"]][:1] == ["Currency"]


def test_ctrl_c_stops_the_demo(full_demo: Demo) -> None:
    """Last of the tests sharing the demo: it stops it."""
    running = full_demo
    running.process.send_signal(signal.SIGINT)  # Ctrl-C
    assert running.process.wait(timeout=30) == 0
    assert "stopping" in "".join(running.output)
    for url in [*running.services.values(), running.ui]:
        assert refuses(url), f"{url} still answers after Ctrl-C"


def test_sigterm_stops_the_demo_without_the_host_too(tmp_path: Path) -> None:
    with demo(tmp_path, "--no-host") as running:
        assert sorted(running.services) == sorted([*(n.lower() for n in SAMPLE_NAMES), "registry"])
        wait_for(lambda: len(running.state()["agents"]) == 5, "the UI to know the five samples")
        assert [a["name"] for a in running.state()["agents"]] == SAMPLE_NAMES
        running.process.send_signal(signal.SIGTERM)
        assert running.process.wait(timeout=30) == 0
        for url in [*running.services.values(), running.ui]:
            assert refuses(url)
