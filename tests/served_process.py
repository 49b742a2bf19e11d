"""`accord serve` in a subprocess for tests: start it, wait until it listens, stop or kill it."""

from __future__ import annotations

import itertools
import os
import random
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from agents_for_tests import SAFETY_TIMEOUT

TESTS_DIR = Path(__file__).resolve().parent

CARD_PATH = "/.well-known/agent-card.json"
SERVING_COMMANDS = pytest.mark.parametrize(
    ("command", "args", "ready_path"),
    [
        ("serve", ("accord.samples.echo:agent", "--store", "memory"), CARD_PATH),
        ("registry", ("serve",), CARD_PATH),
        ("ui", ("--log-level", "info"), "/"),  # uvicorn then says when it listens
    ],
    ids=["serve", "registry", "ui"],
)
"""The commands serving HTTP (`command`, `args`, the path that answers once it listens), for a
test taking them as parameters."""
STARTUP_TIMEOUT = 60.0
"""Upper bound for a server to start listening: importing it alone can take over
SAFETY_TIMEOUT on a loaded machine (tests run niced), so this only guards a hang."""


# Ports handed out for a server started later: below the kernel's ephemeral range (from which
# every bind to port 0, of this run's other workers too, draws), in a band of this worker's own.
_BAND = 2_750  # eight bands from 10000: all below 32768, where Linux's ephemeral range begins
_worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
_first = 10_000 + _worker % 8 * _BAND
_next_port = itertools.cycle(range(_first, _first + _BAND))
for _ in range(random.randrange(_BAND)):  # another run beside this one starts elsewhere
    next(_next_port)


def free_port() -> int:
    """A loopback port nothing listens on, for a server to be started on it soon; the same
    port again only after the rest of the band was handed out."""
    for port in _next_port:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("unreachable: the band repeats")


def accord_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "accord", *args]


@dataclass
class ServedProcess:
    """A running `accord serve`: its base URL, its process and what it wrote to stderr.

    Once the server listens, a thread keeps reading its stderr (into `stderr`), so a
    talkative server never blocks on a full pipe.
    """

    url: str
    process: subprocess.Popen[str]
    stderr: list[str]
    ready_path: str = CARD_PATH
    """What answers 200 once it listens: an agent's card, by default."""
    _reader: threading.Thread | None = field(default=None, repr=False)

    @property
    def output(self) -> str:
        """Everything the server wrote to stderr so far."""
        return "".join(self.stderr)

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        """Send `sig` (SIGTERM: shut down cleanly; SIGKILL: die at once) and wait for the exit."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.wait_exit()

    def kill(self) -> int:
        """Die the way a crash does: SIGKILL, nothing cleaned up."""
        return self.stop(signal.SIGKILL)

    def wait_exit(self) -> int:
        """Wait for the process to end (and its stderr to be read to the end); its exit code."""
        try:
            self.process.wait(timeout=SAFETY_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            pytest.fail(f"accord serve did not exit within {SAFETY_TIMEOUT} s:\n{self.output}")
        stderr = self.process.stderr
        assert stderr is not None
        if self._reader is not None:
            self._reader.join(timeout=SAFETY_TIMEOUT)
        elif not stderr.closed:
            self.stderr.append(stderr.read())
        stderr.close()
        return self.process.returncode

    def _wait_until_listening(self) -> None:
        """Read stderr until uvicorn says it listens, then keep reading it in a thread."""
        watchdog = threading.Timer(STARTUP_TIMEOUT, self.process.kill)
        watchdog.start()
        try:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.stderr.append(line)
                # uvicorn says the first once it listens; with --workers, accord says the second
                # once the port the workers share listens
                if "Uvicorn running on" in line or " workers (card: " in line:
                    break
            else:
                pytest.fail("accord serve did not start:\n" + self.output)
        finally:
            watchdog.cancel()
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        # Only whether it answers: a server of --tls-cert may use a CA this check does not know.
        ready = httpx.get(self.url + self.ready_path, verify=False, timeout=STARTUP_TIMEOUT)
        assert ready.status_code == 200

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)


def _launch(
    args: Sequence[str],
    cwd: Path | None,
    command: str = "serve",
    host: str | None = None,
    ready_path: str = CARD_PATH,
) -> ServedProcess:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS_DIR), os.environ.get("PYTHONPATH")])),
    }
    process = subprocess.Popen(
        accord_command(command, *args, *(("--host", host) if host else ()), "--port", str(port)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env,
    )
    scheme = "https" if "--tls-cert" in args else "http"
    return ServedProcess(f"{scheme}://{host or '127.0.0.1'}:{port}", process, [], ready_path)


@contextmanager
def accord_servers(
    *commands: Sequence[str],
    cwd: Path | None = None,
    command: str = "serve",
    host: str | None = None,
    ready_path: str = CARD_PATH,
) -> Iterator[list[ServedProcess]]:
    """One `accord serve ARGS --port P` per ARGS in `commands`, started and stopped together.

    Each gets a free port; agents may live in the tests folder. The servers listen and
    their cards answer when the block starts; those still running get SIGTERM when it ends.
    """
    servers: list[ServedProcess] = []
    try:
        for args in commands:
            servers.append(_launch(args, cwd, command, host, ready_path))
        for served in servers:
            served._wait_until_listening()
        yield servers
    finally:
        for served in servers:
            if served.process.poll() is None:
                served.process.send_signal(signal.SIGTERM)
        for served in servers:
            served.wait_exit()


@contextmanager
def accord_serve(
    *args: str,
    cwd: Path | None = None,
    command: str = "serve",
    host: str | None = None,
    ready_path: str = CARD_PATH,
) -> Iterator[ServedProcess]:
    """`accord serve ARGS` (or another `command` serving an agent, or serving what answers
    `ready_path`) on a free port, at `host` if given, until the block ends (see
    `accord_servers`)."""
    with accord_servers(args, cwd=cwd, command=command, host=host, ready_path=ready_path) as (
        served,
    ):
        yield served
