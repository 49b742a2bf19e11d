"""The per-request cost of tracing, metrics and the audit log, on and off.

`message/send` (A2A 1.0 JSON-RPC, the echo agent's reply, memory store) is driven through the
app's ASGI interface in this process, without sockets, so what differs between the modes is
accord's own work. Modes: `off` (nothing installed: OpenTelemetry and prometheus_client are
not even imported), `tracing` (an SDK tracer provider, spans batched to an exporter that drops
them), `metrics` (a Prometheus registry of the app's), `audit` (lines to /dev/null), `all`.

    python bench/observability.py                 # every mode, CPU µs per request, JSON lines
    python bench/observability.py --mode off --requests 200 --repeat 1   # one run, for callgrind
    python bench/observability.py --store sqlite  # on a SQLite store (its calls traced too)

CPU time (time.process_time, every thread: the batch exporter's too) is less sensitive than
wall time to other processes on the machine, not immune; modes run interleaved, `--repeat`
times, and the median is reported. For figures that do not depend on load at all, count
instructions: `valgrind --tool=callgrind` on two runs of one mode with different `--requests`,
the difference divided by the difference in requests (see docs/operations.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import accord
from accord.samples import echo
from accord.store import open_store

MODES = ("off", "tracing", "metrics", "audit", "all")
WARMUP = 200
BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
        },
    }
).encode()
SCOPE: dict[str, Any] = {
    "type": "http",
    "asgi": {"version": "3.0"},
    "http_version": "1.1",
    "method": "POST",
    "scheme": "http",
    "path": "/",
    "raw_path": b"/",
    "query_string": b"",
    "root_path": "",
    "server": ("127.0.0.1", 8000),
    "client": ("127.0.0.1", 40000),
    "headers": [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"a2a-version", b"1.0"),
        (b"content-length", str(len(BODY)).encode()),
    ],
}


def instrumented(mode: str, store: str = "memory") -> Any:
    """The echo agent's app with what `mode` turns on, on `store` (`memory`, or `sqlite`: a
    file of the app's own in a temporary folder)."""
    if store == "sqlite":
        folder = tempfile.mkdtemp(prefix="accord-bench-")
        app = accord.create_app(echo.agent, store=open_store(f"sqlite:///{folder}/{mode}.db"))
    else:
        app = accord.create_app(echo.agent)
    if mode in ("audit", "all"):
        from accord.observability.audit import AuditLog

        AuditLog("/dev/null").install(app)
    if mode in ("metrics", "all"):
        from accord.observability.metrics import Metrics

        Metrics().install(app)
    if mode in ("tracing", "all"):
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )

        class Dropping(SpanExporter):
            def export(self, spans: Sequence[Any]) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        from accord.observability.tracing import Tracing

        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(Dropping()))
        Tracing(provider).install(app)
    return app


async def send_once(app: Any) -> None:
    sent = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await asyncio.sleep(3600)  # the client stays connected
        sent = True
        return {"type": "http.request", "body": BODY, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(dict(SCOPE), receive, send)
    assert status == 200, status


async def cpu_us_per_request(app: Any, requests: int) -> float:
    for _ in range(WARMUP):
        await send_once(app)
    handshake = os.environ.get(HANDSHAKE)
    if handshake:  # under callgrind: instrumented only while the requests run
        _signal(Path(handshake), "ready", "go")
    started = time.process_time()
    for _ in range(requests):
        await send_once(app)
    spent = time.process_time() - started
    if handshake:
        _signal(Path(handshake), "done", "stop")
    return spent / requests * 1e6


HANDSHAKE = "ACCORD_BENCH_HANDSHAKE"


def _signal(folder: Path, say: str, until: str) -> None:
    """Say `say` to the process running callgrind; wait for its answer (nothing else runs)."""
    (folder / say).touch()
    while not (folder / until).exists():
        time.sleep(0.05)


def instructions_per_request(mode: str, requests: int, store: str = "memory") -> float:
    """Run one mode under callgrind, instrumented only while its `requests` run (startup and
    warm-up are not counted); the instructions per request. Needs valgrind."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        command = [
            "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
            sys.executable, __file__, "--mode", mode, "--requests", str(requests), "--repeat", "1",
            "--store", store,
        ]  # fmt: skip
        env = {**os.environ, HANDSHAKE: folder}
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
        for wait_for, control, then in (("ready", "-i=on", "go"), ("done", "-i=off", "stop")):
            while not (Path(folder) / wait_for).exists():
                if process.poll() is not None:
                    raise RuntimeError(f"the {mode} run ended early ({process.returncode})")
                time.sleep(0.2)
            subprocess.run(["callgrind_control", control, str(process.pid)], check=True,
                           capture_output=True)  # fmt: skip
            (Path(folder) / then).touch()
        process.wait()
        totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
        return int(totals[-1].split()[1]) / requests


async def measure(
    modes: Sequence[str], requests: int, repeat: int, store: str = "memory"
) -> dict[str, float]:
    apps = {}
    for mode in modes:
        app = instrumented(mode, store)
        context = app.router.lifespan_context(app)
        await context.__aenter__()
        apps[mode] = (app, context)
    runs: dict[str, list[float]] = {mode: [] for mode in modes}
    for _ in range(repeat):
        for mode in modes:
            runs[mode].append(await cpu_us_per_request(apps[mode][0], requests))
    for _, context in apps.values():
        await context.__aexit__(None, None, None)
    return {mode: statistics.median(values) for mode, values in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=MODES, action="append", help="repeatable; default all")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions under callgrind instead"
    )
    arguments = parser.parse_args()
    modes = arguments.mode or list(MODES)
    if arguments.instructions:
        counts = {
            mode: instructions_per_request(mode, arguments.requests, arguments.store)
            for mode in modes
        }
        for mode, count in counts.items():
            row = {"mode": mode, "requests": arguments.requests, "instructions": round(count)}
            if "off" in counts:
                row["overhead_percent"] = round((count - counts["off"]) / counts["off"] * 100, 1)
            print(json.dumps(row))
        return
    medians = asyncio.run(measure(modes, arguments.requests, arguments.repeat, arguments.store))
    base = medians.get("off")
    rows = []
    for mode, us in medians.items():
        row: dict[str, Any] = {"mode": mode, "requests": arguments.requests, "cpu_us": round(us, 1)}
        if base is not None:
            row["overhead_us"] = round(us - base, 1)
            row["overhead_percent"] = round((us - base) / base * 100, 1)
        rows.append(row)
        print(json.dumps(row))
    print(json.dumps({"status": "ok", "rows": rows}))  # last: what `make bench` reads


if __name__ == "__main__":
    main()
