"""Shared benchmark helpers: paths, CPU pinning, server processes, JSON-RPC bodies, /proc data."""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SERVERS = BENCH / "servers"
PROJECT_PYTHON = ROOT / ".venv" / "bin" / "python"
PEER_PYTHON = BENCH / ".venv-peer" / "bin" / "python"
SERVER_CPU = 0
LOAD_CPU = 1
HOST = "127.0.0.1"
CARD_PATH = "/.well-known/agent-card.json"
METHOD_NOT_FOUND = -32601


def raise_fd_limit() -> None:
    """Let this process (and what it starts) open as many sockets as the system allows."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def pin_load() -> None:
    """Run the calling process (the load generator) on the load CPU only."""
    os.sched_setaffinity(0, {LOAD_CPU})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@cache
def accord_has_store_option() -> bool:
    """Whether `accord serve` takes `--store` (so the benchmark can choose the store)."""
    command = [str(PROJECT_PYTHON.with_name("accord")), "serve", "--help"]
    return "--store" in subprocess.run(command, capture_output=True, text=True).stdout


AUTO_WORKERS = len(os.sched_getaffinity(0))
"""What `accord serve --workers auto` starts here: one worker per core."""


@dataclass(frozen=True)
class ServerSpec:
    """How to start one benchmarked server: its name, its Python, and the app to serve."""

    name: str
    python: Path
    target: str  # module:attribute, imported from bench/servers
    accord: bool = False  # served with `accord serve` rather than plain uvicorn
    store: str = "memory"  # accord's store: memory, or sqlite (a new file for each server)
    workers: int = 1  # server processes (`accord serve --workers`, `uvicorn --workers`)
    node: bool = False  # a script of bench/servers run by Node (`target` is its file name)
    options: tuple[str, ...] = ()  # more `accord serve` options

    def command(self, port: int, workdir: Path) -> list[str]:
        if self.node:
            return ["node", str(SERVERS / self.target), str(port)]
        common = ["--host", HOST, "--port", str(port), "--log-level", "warning"]
        if self.workers > 1:
            common += ["--workers", str(self.workers)]
        if not self.accord:
            return [str(self.python), "-m", "uvicorn", self.target, *common, "--no-access-log"]
        if accord_has_store_option():
            url = "memory" if self.store == "memory" else f"sqlite:///{workdir}/accord.db"
            common += ["--store", url]
        return [str(self.python.with_name("accord")), "serve", self.target, *common, *self.options]

    def cpus(self) -> str:
        """The CPUs the server runs on: the server CPU alone for one process; for several, as
        many CPUs as workers, the load CPU last (on a machine of two, the workers share it)."""
        if self.workers == 1:
            return str(SERVER_CPU)
        others = [cpu for cpu in sorted(os.sched_getaffinity(0)) if cpu != LOAD_CPU]
        return ",".join(str(cpu) for cpu in [*others, LOAD_CPU][: self.workers])

    def with_workers(self, workers: int) -> ServerSpec:
        return replace(self, workers=workers)


ACCORD_TASK = ServerSpec("accord (task)", PROJECT_PYTHON, "accord.samples.echo:agent", True)
ACCORD_MESSAGE = ServerSpec(
    "accord (message)", PROJECT_PYTHON, "accord.samples.echo:message_agent", True
)
ACCORD_TASK_SQLITE = ServerSpec(
    "accord (task, SQLite)", PROJECT_PYTHON, "accord.samples.echo:agent", True, "sqlite"
)
ACCORD_CHUNKS = ServerSpec("accord", PROJECT_PYTHON, "accord_chunks:agent", True)
ACCORD_CHUNKS_SQLITE = ServerSpec("accord", PROJECT_PYTHON, "accord_chunks:agent", True, "sqlite")
PEER_TASK = ServerSpec("a2a-sdk (task)", PEER_PYTHON, "peer_echo:task_app")
PEER_MESSAGE = ServerSpec("a2a-sdk (message)", PEER_PYTHON, "peer_echo:message_app")
PEER_CHUNKS = ServerSpec("a2a-sdk", PEER_PYTHON, "peer_echo:chunks_app")
FLOOR = ServerSpec("floor (bare ASGI)", PROJECT_PYTHON, "floor:app")
JS_TASK = ServerSpec("JS SDK on Node (task)", PROJECT_PYTHON, "peer_js_echo.mjs", node=True)
JS_MODULES = ROOT / "tests" / "js" / "node_modules"


def js_peer_missing() -> str | None:
    """Why the JS SDK's server cannot run here (None: it can), once its modules are linked
    beside bench/servers (the SDK is installed for the tests, in tests/js)."""
    if shutil.which("node") is None:
        return "n/a (node not installed)"
    if not (JS_MODULES / "@a2a-js" / "sdk").exists():
        return "n/a (npm ci --prefix tests/js not run)"
    link = SERVERS / "node_modules"
    if not link.exists():
        link.symlink_to(JS_MODULES)
    return None


@dataclass
class RunningServer:
    spec: ServerSpec
    port: int
    process: subprocess.Popen[bytes]

    @property
    def pid(self) -> int:
        return self.process.pid

    def rss_kib(self) -> int:
        """Resident memory (VmRSS) of the server process."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError(f"no VmRSS for {self.pid}")

    def cpu_seconds(self) -> float:
        """User plus system CPU time the server (its workers too) has used so far."""
        return sum(_cpu_seconds(pid) for pid in _process_tree(self.pid))


def _process_tree(pid: int) -> list[int]:
    """`pid` and its descendants (a server's workers), as far as they are alive."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [pid, *(found for child in children for found in _process_tree(int(child)))]


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def serve(spec: ServerSpec, startup_timeout: float = 30.0) -> Iterator[RunningServer]:
    """Start `spec` pinned to the server CPU, wait until it answers, and stop it afterwards."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="accord-bench-") as workdir:
        command = ["taskset", "-c", spec.cpus(), *spec.command(port, Path(workdir))]
        process = subprocess.Popen(
            command, cwd=SERVERS, preexec_fn=raise_fd_limit, stdin=subprocess.DEVNULL
        )
        server = RunningServer(spec, port, process)
        try:
            _wait_ready(server, startup_timeout)
            yield server
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(server: RunningServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.spec.name} exited with {server.process.returncode}")
        try:
            status, _ = http_request(server.port, "GET", CARD_PATH)
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{server.spec.name} did not answer within {timeout:.0f} s")


def http_request(
    port: int, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    """One blocking HTTP/1.1 request on a fresh connection: (status, body)."""
    head = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body:
        head.append(f"Content-Length: {len(body)}")
    with socket.create_connection((HOST, port), timeout=10) as sock:
        sock.sendall("\r\n".join(head).encode() + b"\r\n\r\n" + body)
        response = b"".join(iter(lambda: sock.recv(65536), b""))
    status_line, _, rest = response.partition(b"\r\n")
    _, _, payload = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), payload


# --- JSON-RPC request bodies, per protocol version ---

VERSIONS = ("0.3", "1.0")
_SEND_METHOD = {"0.3": "message/send", "1.0": "SendMessage"}
_STREAM_METHOD = {"0.3": "message/stream", "1.0": "SendStreamingMessage"}


def version_headers(version: str) -> dict[str, str]:
    """Headers of a JSON-RPC call in `version` (1.0 names itself; no header means 0.3)."""
    headers = {"Content-Type": "application/json"}
    if version != "0.3":
        headers["A2A-Version"] = version
    return headers


def _message(version: str, text: str) -> dict[str, object]:
    if version == "0.3":
        parts: list[dict[str, str]] = [{"kind": "text", "text": text}]
        return {"kind": "message", "messageId": str(uuid.uuid4()), "role": "user", "parts": parts}
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def rpc_body(method: str, params: dict[str, object], request_id: int = 1) -> bytes:
    call = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(call).encode()


def send_body(version: str, text: str = "hello", *, stream: bool = False) -> bytes:
    """A `message/send` (or streaming) call carrying `text`, in the wire format of `version`."""
    method = (_STREAM_METHOD if stream else _SEND_METHOD)[version]
    return rpc_body(method, {"message": _message(version, text)})


def resubscribe_body(task_id: str) -> bytes:
    """A 0.3 `tasks/resubscribe` call for `task_id`."""
    return rpc_body("tasks/resubscribe", {"id": task_id})


def probe(port: int, version: str) -> str | None:
    """None when the server answers `message/send` in `version`; else why it does not."""
    status, payload = http_request(port, "POST", "/", send_body(version), version_headers(version))
    try:
        reply = json.loads(payload)
    except ValueError:
        return f"HTTP {status}, not JSON"
    if "result" in reply:
        return None
    error = reply.get("error", {})
    if error.get("code") == METHOD_NOT_FOUND:
        return "n/a (not served yet)"
    return f"error {error.get('code')}: {error.get('message')}"
