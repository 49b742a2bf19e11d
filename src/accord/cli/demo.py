"""`accord demo`: the five sample agents, a registry they are added to, the multi-agent host and
the web UI on loopback, each in its own process and SQLite file under ./.accord/demo/, until
Ctrl-C stops them all."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from types import FrameType
from typing import Annotated, TextIO

import httpx
import typer

from accord.cli import serve_options
from accord.cli.errors import fail, reports_errors
from accord.cli.ports import bind_error
from accord.server.health import READY_PATH

SAMPLES = ("currency", "expense", "image", "movies", "coder")
HOST_TARGET = "accord.host:agent"
HOST_AGENTS_VARIABLE = "ACCORD_HOST_AGENTS"
HOST_REGISTRY_VARIABLE = "ACCORD_HOST_REGISTRY"
HOST_TOKEN_VARIABLE = "ACCORD_HOST_TOKEN"
REGISTRY_TOKEN_VARIABLE = "ACCORD_REGISTRY_TOKEN"
LOOPBACK_NETWORKS = ("127.0.0.0/8", "::1")
"""What the UI may fetch besides public addresses: the demo's agents, all on loopback."""
STATE_DIR = Path(".accord") / "demo"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0


class Stop(Exception):
    """Ctrl-C or SIGTERM: stop everything."""


@dataclass
class Service:
    """One process of the demo: what it is, where it listens, where its output goes."""

    name: str
    url: str
    process: subprocess.Popen[bytes]
    log: TextIO
    log_path: Path

    def log_tail(self, lines: int = 15) -> str:
        self.log.flush()
        return "".join(self.log_path.read_text(errors="replace").splitlines(True)[-lines:])


@reports_errors
def demo(
    port: Annotated[
        int,
        typer.Option(metavar="PORT", min=0, max=65535, help="The UI's port (the one URL to open)."),
    ] = 8000,
    first_port: Annotated[
        int,
        typer.Option(
            metavar="PORT",
            min=0,
            max=65530,
            help="The first sample's port; the other samples, the host and the registry take the"
            " next six. 0: any free ports.",
        ),
    ] = 8001,
    no_host: Annotated[
        bool, typer.Option("--no-host", help="Start the samples and the UI, no host.")
    ] = False,
    state_dir: Annotated[
        Path,
        typer.Option(metavar="DIR", help="Where the stores (one SQLite file each) and logs go."),
    ] = STATE_DIR,
    allowed_host: serve_options.AllowedHostOption = None,
) -> None:
    """Start the demo: the sample agents, the host and the web UI.

    The host knows the samples, and so does a registry, which the UI's Agents page shows and
    searches; each process has its own SQLite store. Ctrl-C stops it all.
    The UI registers agents with the host (with a token made for this run), fetches nothing
    beyond loopback and public addresses, and answers only to loopback names and
    --allowed-host.
    """
    with_host = not no_host
    if with_host and find_spec("accord.host") is None:
        typer.echo("accord demo: accord.host is not in this install: starting without the host.")
        with_host = False
    state_dir.mkdir(parents=True, exist_ok=True)
    ports = _ports(first_port, 2 + len(SAMPLES))
    for taken in [p for p in (port, *ports) if p and not _is_free(p)]:
        fail(f"accord demo: port {taken} is in use (choose others with --port and --first-port)")
    services: list[Service] = []
    # Ctrl-C and SIGTERM both stop everything (SIGINT too when started with it ignored).
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for name, agent_port in zip(SAMPLES, ports, strict=False):
            target = f"accord.samples.{name}:agent"
            services.append(_serve(name, target, agent_port, state_dir))
        sample_urls = [service.url for service in services]
        for service in services:
            _wait_until_up(service, READY_PATH)
        agent_urls = list(sample_urls)
        registry = _registry(ports[-1], state_dir, sample_urls)
        services.append(registry)
        ui_port = port or _free_port()
        ui_args = ["ui", "--port", str(ui_port), "--registry", registry.url]
        for network in LOOPBACK_NETWORKS:
            ui_args += ["--fetch-allow", network]
        for name in allowed_host or ():
            ui_args += ["--allowed-host", name]
        # The host's agents are changed with a token of this run, which only the UI is given.
        token_env = {HOST_TOKEN_VARIABLE: secrets.token_urlsafe(24)}
        if with_host:
            env = {
                HOST_AGENTS_VARIABLE: ",".join(sample_urls),
                HOST_REGISTRY_VARIABLE: str(state_dir / "host-agents.json"),
                **token_env,
            }
            host = _serve("host", HOST_TARGET, ports[len(SAMPLES)], state_dir, env)
            services.append(host)
            _wait_until_up(host, READY_PATH)
            agent_urls.insert(0, host.url)
            ui_args += ["--host-url", host.url]
        for url in agent_urls:
            ui_args += ["--agent", url]
        ui = _start("ui", ui_args, f"http://127.0.0.1:{ui_port}", state_dir, token_env)
        services.append(ui)
        _wait_until_up(ui, "/")
        _announce(services, ui.url, state_dir)
        _watch(services)
    except Stop:
        typer.echo("\naccord demo: stopping…")
    finally:
        _stop_all(services)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _serve(
    name: str, target: str, port: int, state_dir: Path, env: dict[str, str] | None = None
) -> Service:
    store = f"sqlite:///{(state_dir / f'{name}.db').as_posix()}"
    args = ["serve", target, "--port", str(port), "--store", store, "--log-level", "warning"]
    return _start(name, args, f"http://127.0.0.1:{port}", state_dir, env or {})


def _registry(port: int, state_dir: Path, agents: list[str]) -> Service:
    """A registry (with a curator token of this run, which nobody else is given) holding
    `agents`, started and filled."""
    token = secrets.token_urlsafe(24)
    store = f"sqlite:///{(state_dir / 'registry.db').as_posix()}"
    args = ["registry", "serve", "--port", str(port), "--store", store, "--log-level", "warning"]
    url = f"http://127.0.0.1:{port}"
    registry = _start("registry", args, url, state_dir, {REGISTRY_TOKEN_VARIABLE: token})
    _wait_until_up(registry, "/registry/agents")
    for agent in agents:
        try:
            added = httpx.post(
                url + "/registry/agents",
                json={"url": agent},
                headers={"Authorization": f"Bearer {token}"},
                timeout=30.0,
            )
        except httpx.HTTPError as exc:
            fail(f"accord demo: the registry did not take {agent}: {exc}")
        if added.status_code not in (200, 201):
            fail(f"accord demo: the registry refused {agent}: {added.text}")
    return registry


def _start(name: str, args: list[str], url: str, state_dir: Path, env: dict[str, str]) -> Service:
    log_path = state_dir / f"{name}.log"
    log = log_path.open("w", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "accord", *args],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **env},
    )
    return Service(name, url, process, log, log_path)


def _wait_until_up(service: Service, path: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if service.process.poll() is not None:
            fail(f"accord demo: {service.name} stopped on start:\n{service.log_tail()}")
        try:
            if httpx.get(service.url + path, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    fail(f"accord demo: {service.name} did not answer within {START_TIMEOUT:.0f} s")


def _announce(services: list[Service], ui_url: str, state_dir: Path) -> None:
    for service in services[:-1]:
        typer.echo(f"  {service.name:<9} {service.url}")
    typer.echo(f"  logs and stores in {state_dir}/")
    typer.echo(f"\naccord demo: open {ui_url}/   (Ctrl-C stops everything)", color=False)


def _watch(services: list[Service]) -> None:
    """Wait for Ctrl-C; a process that dies on its own stops the demo."""
    while True:
        for service in services:
            if service.process.poll() is not None:
                fail(f"accord demo: {service.name} stopped:\n{service.log_tail()}")
        time.sleep(0.5)


def _stop_all(services: list[Service]) -> None:
    """SIGTERM to every process still running (the UI first), then wait; kill stragglers."""
    for service in reversed(services):
        if service.process.poll() is None:
            service.process.terminate()
    deadline = time.monotonic() + STOP_TIMEOUT
    for service in reversed(services):
        try:
            service.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            service.process.kill()
            service.process.wait()
        service.log.close()


def _stop(signum: int, frame: FrameType | None) -> None:
    raise Stop


def _ports(first: int, count: int) -> list[int]:
    return [_free_port() for _ in range(count)] if first == 0 else list(range(first, first + count))


def _is_free(port: int) -> bool:
    """Whether the port can be served on (one in TIME_WAIT, after a restart, can)."""
    return bind_error("127.0.0.1", port) is None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
