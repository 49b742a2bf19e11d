"""`accord serve` in a subprocess for tests: start it, wait until it listens, stop or kill it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from agents_for_tests import SAFETY_TIMEOUT

TESTS_DIR = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def accord_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "accord", *args]


@dataclass
class ServedProcess:
    """A running `accord serve`: its base URL and its process."""

    url: str
    process: subprocess.Popen[str]
    stderr: list[str]

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        """Send `sig` (SIGTERM: shut down cleanly; SIGKILL: die at once) and wait for the exit."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        _, rest = self.process.communicate(timeout=SAFETY_TIMEOUT)
        self.stderr.append(rest)
        return self.process.returncode


@contextmanager
def accord_serve(*args: str, cwd: Path | None = None) -> Iterator[ServedProcess]:
    """`accord serve ARGS --port P` until the block ends; agents may live in the tests folder."""
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS_DIR), os.environ.get("PYTHONPATH")])),
    }
    process = subprocess.Popen(
        accord_command("serve", *args, "--port", str(port)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env,
    )
    watchdog = threading.Timer(SAFETY_TIMEOUT, process.kill)  # only guards against a hang
    watchdog.start()
    served = ServedProcess(f"http://127.0.0.1:{port}", process, [])
    try:
        assert process.stderr is not None
        for line in process.stderr:  # uvicorn says when it listens
            served.stderr.append(line)
            if "Uvicorn running on" in line:
                break
        else:
            pytest.fail("accord serve did not start:\n" + "".join(served.stderr))
        watchdog.cancel()
        assert httpx.get(served.url + "/.well-known/agent-card.json").status_code == 200
        yield served
    finally:
        watchdog.cancel()
        served.stop()
