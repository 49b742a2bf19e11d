"""`make bench`: accord, the official a2a-sdk and a bare-ASGI floor, side by side on pinned cores.

Every measurement gets a fresh server pinned to CPU 0; wrk and the Python clients run on CPU 1.
Writes bench/results/latest.json, the generated part of docs/benchmarks.md and docs/benchmarks.png.
`--quick` runs short, smaller cases as a smoke test and leaves the docs alone; `--only PART`
(send, versions, card, streaming, memory, store, long_stream, workers, observability, gateway)
runs one part alone, docs untouched too. The workers part runs servers of several processes on
several CPUs: on a machine of two, they share the load CPU with wrk.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import gateway
from common import (
    ACCORD_CHUNKS,
    ACCORD_CHUNKS_SQLITE,
    ACCORD_MESSAGE,
    ACCORD_TASK,
    ACCORD_TASK_SQLITE,
    AUTO_WORKERS,
    BENCH,
    CARD_PATH,
    FLOOR,
    JS_TASK,
    LOAD_CPU,
    PEER_CHUNKS,
    PEER_MESSAGE,
    PEER_PYTHON,
    PEER_TASK,
    PROJECT_PYTHON,
    ROOT,
    SERVER_CPU,
    VERSIONS,
    ServerSpec,
    accord_has_store_option,
    js_peer_missing,
    pin_load,
    probe,
    raise_fd_limit,
    send_body,
    serve,
)
from cpu_load import cpu_per_request
from load import wrk
from report import render, results_table, targets, write_doc
from streams import idle_streams, stream_chunks

RESULTS = BENCH / "results" / "latest.json"
DOC = ROOT / "docs" / "benchmarks.md"
CHART = ROOT / "docs" / "benchmarks.png"
CONNECTIONS = (1, 50)
CASE_TIMEOUT = 180.0  # seconds for one streaming or memory case before it is reported as such
LONG_STREAM_TIMEOUT = 600.0  # one long-stream case (100,000 chunks on PostgreSQL: about 30 s)
TOKEN_BYTES = 8
STORES = ("memory", "sqlite", "postgresql")


class Settings:
    """Durations and sizes; `quick` shrinks them for a smoke test of the harness."""

    def __init__(self, quick: bool) -> None:
        self.quick = quick
        self.warmup = 1 if quick else 2
        self.seconds = {1: 1, 50: 1} if quick else {1: 5, 50: 8}
        self.chunks = (100, 1000) if quick else (100, 1000, 10000)
        self.streams = (1000,) if quick else (1000, 10000)
        self.store_seconds = 1.0 if quick else 5.0
        self.interleaved_rounds = 2 if quick else 8
        self.interleaved_seconds = 1 if quick else 4
        # Requests served under valgrind, twice: the difference is one version's count.
        self.counted_requests = (50, 150) if quick else (100, 400)
        # (chunks, bytes per chunk) of the long-stream rows: tokens of a model, then 4 KiB.
        small = (100, 1000) if quick else (100, 1000, 10000, 100000)
        self.long_streams = [(n, TOKEN_BYTES) for n in small] + [(100 if quick else 1000, 4096)]


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _load(
    spec: ServerSpec, s: Settings, *, conns: int, body: bytes, path: str, version: str
) -> Any:
    """Warm a fresh server up, then measure it with wrk."""
    with serve(spec) as server:
        if body and (why := probe(server.port, version)):
            return {"status": why}
        wrk(server.port, connections=50, seconds=s.warmup, body=body, path=path, version=version)
        result = wrk(
            server.port, connections=conns, seconds=s.seconds[conns], body=body, path=path,
            version=version,
        )  # fmt: skip
        return {"status": "ok", **vars(result)}


def _send_row(spec: ServerSpec, s: Settings, version: str, conns: int) -> dict[str, Any]:
    result = _load(spec, s, conns=conns, body=send_body(version), path="/", version=version)
    log(f"send  {spec.name:18} {version} c{conns:<3} {result}")
    return {"server": spec.name, "version": version, "connections": conns, **result}


def bench_send(s: Settings) -> list[dict[str, Any]]:
    """Each setting on every server back to back, so drifting machine load skews ratios less."""
    rows = []
    for version in VERSIONS:
        for conns in CONNECTIONS:
            for spec in (ACCORD_TASK, PEER_TASK, FLOOR, ACCORD_MESSAGE, PEER_MESSAGE):
                rows.append(_send_row(spec, s, version, conns))
        if accord_has_store_option():  # accord serve's default store, at 50 connections only
            rows.append(_send_row(ACCORD_TASK_SQLITE, s, version, 50))
    for conns in CONNECTIONS:  # the JS SDK's server, in 1.0 (its own version)
        why = js_peer_missing()
        if why is None:
            rows.append(_send_row(JS_TASK, s, "1.0", conns))
        else:
            rows.append({"server": JS_TASK.name, "version": "1.0", "connections": conns,
                         "status": why})  # fmt: skip
    return rows


def _version_cost(version: str, s: Settings) -> dict[str, Any]:
    """A fresh accord server's CPU time per Task-mode send in `version`, at 50 connections."""
    with serve(ACCORD_TASK) as server:
        if why := probe(server.port, version):
            return {"status": why}
        result = cpu_per_request(
            server, body=send_body(version), path="/", version=version,
            seconds=s.interleaved_seconds, connections=50,
        )  # fmt: skip
        return {"status": "ok", **vars(result)}


def bench_versions(s: Settings) -> list[dict[str, Any]]:
    """0.3 and 1.0 Task-mode sends interleaved, round by round, the order alternating: one
    run's rate moves more than the 5% the versions are to be within, CPU per request less."""
    rows = []
    for round_ in range(1, s.interleaved_rounds + 1):
        for version in VERSIONS if round_ % 2 else VERSIONS[::-1]:
            result = _version_cost(version, s)
            log(f"vers  {ACCORD_TASK.name:18} {version} round {round_} {result}")
            rows.append({"server": ACCORD_TASK.name, "version": version, "round": round_,
                         "connections": 50, **result})  # fmt: skip
    return rows


def bench_card(s: Settings) -> list[dict[str, Any]]:
    rows = []
    for conns in CONNECTIONS:
        for spec in (ACCORD_TASK, PEER_TASK, FLOOR):
            result = _load(spec, s, conns=conns, body=b"", path=CARD_PATH, version="0.3")
            rows.append({"server": spec.name, "connections": conns, **result})
            log(f"card  {spec.name:18} c{conns:<3} {result}")
    return rows


def _guarded(measure: Any) -> dict[str, Any]:
    """Run one streaming or memory case; a timeout or failure becomes its row's status."""
    try:
        return {"status": "ok", **measure()}
    except TimeoutError:
        return {"status": f"timeout (> {CASE_TIMEOUT:.0f} s)"}
    except Exception as exc:
        return {"status": f"error: {type(exc).__name__}: {exc}"}


def bench_streaming(s: Settings) -> list[dict[str, Any]]:
    rows = []
    for spec in (ACCORD_CHUNKS, PEER_CHUNKS):
        with serve(spec) as server:
            stream_chunks(server, 100, 1, 5, CASE_TIMEOUT)  # warm-up
            for subscribers in (1, 10):
                for chunks in s.chunks:
                    # Enough repetitions that the server spends well over a CPU-clock tick.
                    reps = max(1, (3000 if subscribers == 1 else 1000) // chunks)

                    def measure(c: int = chunks, n: int = subscribers, r: int = reps) -> Any:
                        return vars(stream_chunks(server, c, n, r, CASE_TIMEOUT))

                    row = {"server": spec.name, "subscribers": subscribers, "chunks": chunks}
                    rows.append({**row, **_guarded(measure)})
                    log(f"sse   {rows[-1]}")
    return rows


def bench_memory(s: Settings) -> list[dict[str, Any]]:
    rows = []
    for spec in (ACCORD_CHUNKS, PEER_CHUNKS):
        for count in s.streams:
            # accord refuses connections past --max-connections (1,000 by default)
            held = replace(spec, options=("--max-connections", str(count + 100)))
            with serve(held if spec.accord else spec) as server:
                stream_chunks(server, 10, 1, 5, CASE_TIMEOUT)  # warm-up

                def measure(server: Any = server, count: int = count) -> Any:
                    result = idle_streams(server, count, CASE_TIMEOUT)
                    return {**vars(result), "kib_per_stream": result.kib_per_stream}

                rows.append({"server": spec.name, "streams": count, **_guarded(measure)})
                log(f"mem   {rows[-1]}")
    return rows


def worker_counts() -> list[int]:
    """1, 2 and `auto` (one per core), each once."""
    return sorted({1, 2, AUTO_WORKERS})


def bench_workers(s: Settings) -> list[dict[str, Any]]:
    """Task-mode sends on 1, 2 and `auto` workers (accord on its default store; the peer with
    as many uvicorn workers, its own way to scale), and streams followed by resubscribers that
    land on any worker (accord's workers share events through their hub)."""
    rows = []
    for workers in worker_counts():
        for spec in (ACCORD_TASK_SQLITE, PEER_TASK):
            result = _load(
                spec.with_workers(workers), s, conns=50, body=send_body("0.3"), path="/",
                version="0.3",
            )  # fmt: skip
            rows.append({"server": spec.name, "workers": workers, "connections": 50, **result})
            log(f"work  {spec.name:18} w{workers} {result}")
        with serve(ACCORD_CHUNKS_SQLITE.with_workers(workers)) as server:
            stream_chunks(server, 100, 1, 2, CASE_TIMEOUT)  # warm-up

            def measure(server: Any = server) -> Any:
                return vars(stream_chunks(server, 1000, 10, 3, CASE_TIMEOUT))

            row = {"server": "accord", "workers": workers, "subscribers": 10, "chunks": 1000}
            rows.append({**row, **_guarded(measure)})
            log(f"work  {rows[-1]}")
    return rows


def _pinned_script(script: str, *args: Any, timeout: float) -> dict[str, Any]:
    """Run a bench script on the server's CPU; the JSON line it prints last, or why not."""
    command = ["taskset", "-c", str(SERVER_CPU), str(PROJECT_PYTHON), str(BENCH / script)]
    try:
        done = subprocess.run(
            command + [str(arg) for arg in args], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"status": f"timeout (> {timeout:.0f} s)"}
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {"status": f"error: {done.stderr[-300:]}"}


def bench_store(s: Settings) -> list[dict[str, Any]]:
    rows = []
    for store in STORES:
        result = _pinned_script("store_bench.py", store, s.store_seconds, timeout=120)
        rows.append({"store": store, **result})
        log(f"store {rows[-1]}")
    return rows


def bench_long_stream(s: Settings) -> list[dict[str, Any]]:
    """One blocking send whose agent streams many chunks, on each store (one pass each)."""
    rows = []
    for store in STORES:
        for chunks, size in s.long_streams:
            result = _pinned_script(
                "long_stream.py", store, chunks, size, timeout=LONG_STREAM_TIMEOUT
            )
            rows.append({"store": store, "chunks": chunks, "bytes": size, **result})
            log(f"long  {rows[-1]}")
    return rows


def bench_observability(s: Settings) -> list[dict[str, Any]]:
    """CPU per request with tracing, metrics and the audit log off and on (in-process)."""
    requests, repeat = (300, 1) if s.quick else (2000, 5)
    args = ("--requests", requests, "--repeat", repeat)
    result = _pinned_script("observability.py", *args, timeout=600)
    rows = result.get("rows") or [{"mode": "all", "status": result.get("status", "?")}]
    for row in rows:
        log(f"obs   {row}")
    return [{"status": "ok", **row} for row in rows] if "rows" in result else rows


def bench_instructions(s: Settings) -> list[dict[str, Any]]:
    """Instructions `accord serve` spends per Task-mode send in 0.3 and 1.0 (valgrind, at 50
    connections): what the versions cost, whatever else the machine runs."""
    rows = []
    for version in VERSIONS:
        if shutil.which("valgrind") is None:
            result: dict[str, Any] = {"status": "valgrind not installed"}
        else:
            small, large = s.counted_requests
            args = (f"rpc-{version}", "--small", small, "--large", large, "--connections", 50,
                    "--json")  # fmt: skip
            result = _pinned_script("served_instructions.py", *args, timeout=900)
        rows.append({"version": version, **result})
        log(f"instr {rows[-1]}")
    return rows


BENCHES = {
    "send": bench_send,
    "versions": bench_versions,
    "instructions": bench_instructions,
    "card": bench_card,
    "streaming": bench_streaming,
    "memory": bench_memory,
    "store": bench_store,
    "long_stream": bench_long_stream,
    "workers": bench_workers,
    "observability": bench_observability,
}


def _output(command: list[str]) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=False).stdout.strip()


def _versions(python: str, names: list[str]) -> str:
    if not Path(python).exists():  # the peer's venv, before `make bench` made it
        return "not installed"
    code = "import importlib.metadata as m, sys; print(', '.join(n + ' ' + m.version(n) for n in sys.argv[1:]))"  # noqa: E501
    return _output([python, "-c", code, *names])


def machine() -> dict[str, str]:
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line), "?")
    os_name = _output(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"])
    dirty = (
        "+uncommitted" if _output(["git", "-C", str(ROOT), "status", "--porcelain", "src"]) else ""
    )
    project = _versions(str(PROJECT_PYTHON), ["uvicorn", "starlette", "pydantic"])
    return {
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "memory": f"{int(meminfo['MemTotal'].split()[0]) / 2**20:.0f} GiB",
        "os": f"{os_name}, Linux {platform.release()}",
        "python": platform.python_version(),
        "versions": f"{project}; peer: {_versions(str(PEER_PYTHON), ['a2a-sdk', 'uvicorn'])}; "
        + _output(["sh", "-c", "wrk --version 2>&1 | head -1 | cut -d' ' -f1-2"]),
        "commit": _output(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]) + dirty,
    }


def bench_gateway(s: Settings) -> list[dict[str, Any]]:
    """The latency `accord gateway` adds in front of the official SDK's 0.3 agent."""
    log("gateway: direct and through accord gateway, sequential sends")
    return gateway.measure(requests=200 if s.quick else 1000, rounds=1 if s.quick else 3)


BENCHES["gateway"] = bench_gateway


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short smoke test; docs untouched")
    parser.add_argument(
        "--only", choices=list(BENCHES), help="run this part alone (docs untouched)"
    )
    arguments = parser.parse_args()
    settings = Settings(arguments.quick)
    raise_fd_limit()
    results: dict[str, Any] = {"machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M %Z")}
    load_before = os.getloadavg()[0]
    pin_load()
    started = time.monotonic()
    for name, bench in BENCHES.items():
        if arguments.only in (None, name):
            results[name] = bench(settings)
    results["seconds"] = round(time.monotonic() - started)
    results["load"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1))
    print(results_table(results))
    print()
    for name, measured, verdict in targets(results):
        print(f"{verdict:>12}  {name}: {measured}")
    print(f"\n{results['seconds']} s; server on CPU {SERVER_CPU}, load on CPU {LOAD_CPU}")
    if settings.quick or arguments.only:
        return
    write_doc(DOC, render(results))
    subprocess.run(
        [str(PEER_PYTHON), str(BENCH / "chart.py"), str(RESULTS), str(CHART)], check=True
    )
    print(f"wrote {DOC.relative_to(ROOT)} and {CHART.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
