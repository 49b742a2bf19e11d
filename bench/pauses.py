"""Where the tail of Task-mode sends goes: GC pauses and long event-loop steps of `accord serve`.

`python bench/pauses.py [--store memory|sqlite] [--version 0.3|1.0] [--rounds R] [--seconds S]
[--connections C] [--step-ms MS] [--thresholds A,B,C]` serves the echo agent with `accord
serve` pinned to the server CPU, in a process that records every cyclic-GC collection made
under load (its generation and its duration in CPU time of the thread, time.thread_time, so
other load on the machine does not count), then loads it with wrk (at C connections) R times
for S seconds. It prints, per round, wrk's p50 and p99 and the load average; then the server's
CPU time per request, the collections by generation, and the GC-tracked objects the server
holds after the load compared with before it, by type.

`--step-ms MS` also records every event-loop step (one callback or task step) longer than MS
of CPU time, with what it ran; that needs asyncio's own loop, so the server runs on it rather
than uvloop (slower, with more garbage). `--thresholds` sets the GC thresholds after `accord
serve` has tuned them, to compare settings.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import HOST, PROJECT_PYTHON, SERVER_CPU, SERVERS, free_port, probe, send_body
from load import wrk

# Runs in the server process before `accord serve`: records collections and long loop steps,
# and writes them to $PAUSES_OUT when the server exits.
_PROBE = r"""
import asyncio.events, atexit, gc, json, os, sys, time
if float(os.environ["PAUSES_STEP_MS"]) > 0:
    sys.modules["uvloop"] = None  # uvicorn falls back to asyncio's loop, whose steps are timed
from accord.cli.main import main

collections, steps, started = [], [], {}
step_limit = float(os.environ["PAUSES_STEP_MS"]) / 1000
objects = {}

def on_gc(phase, info):
    if phase == "start":
        started["at"] = time.thread_time()
        started["seen"] = sum(gc.get_count()[: info["generation"] + 1])
    else:
        if len(objects) == 1:  # only those under load, between the two marks
            collections.append((info["generation"], time.thread_time() - started["at"],
                                info["collected"]))

gc.callbacks.append(on_gc)
run = asyncio.events.Handle._run

def timed_run(self):
    start = time.thread_time()
    run(self)
    spent = time.thread_time() - start
    if step_limit and spent > step_limit and len(objects) == 1:
        task = getattr(self._callback, "__self__", None)
        coro = task.get_coro() if isinstance(task, asyncio.Task) else None
        steps.append((spent, getattr(coro, "__qualname__", None) or repr(self)[:200]))

asyncio.events.Handle._run = timed_run

def mark(signum, frame):
    tracked = gc.get_objects()
    kinds = {}
    for tracked_object in tracked:
        kind = type(tracked_object).__qualname__
        kinds[kind] = kinds.get(kind, 0) + 1
    objects[str(len(objects))] = [len(tracked), len(gc.get_objects(2)), kinds]

import signal
signal.signal(signal.SIGUSR1, mark)

def dump():
    with open(os.environ["PAUSES_OUT"], "w") as out:
        json.dump({"collections": collections, "steps": steps, "objects": objects}, out)

atexit.register(dump)
if os.environ.get("PAUSES_THRESHOLDS"):
    import accord.cli.serve as serve
    thresholds = [int(t) for t in os.environ["PAUSES_THRESHOLDS"].split(",")]
    tune = serve._tune_gc
    def tuned():
        tune()
        gc.set_threshold(*thresholds)
    serve._tune_gc = tuned
sys.argv = ["accord", *sys.argv[1:]]
main()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="memory", choices=("memory", "sqlite"))
    parser.add_argument("--version", default="0.3")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--step-ms", type=float, default=0.0, help="0: uvloop, steps untimed")
    parser.add_argument("--agent", default="accord.samples.echo:agent")
    parser.add_argument("--thresholds", default="", help="GC thresholds instead of serve's: A,B,C")
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="accord-pauses-") as workdir:
        out = Path(workdir) / "pauses.json"
        store = "memory" if args.store == "memory" else f"sqlite:///{workdir}/accord.db"
        command = [
            "taskset", "-c", str(SERVER_CPU), str(PROJECT_PYTHON), "-c", _PROBE, "serve",
            args.agent, "--host", HOST, "--port", str(port), "--log-level", "warning",
            "--store", store,
        ]  # fmt: skip
        env = dict(os.environ, PAUSES_OUT=str(out), PAUSES_STEP_MS=str(args.step_ms))
        env["PAUSES_THRESHOLDS"] = args.thresholds
        server = subprocess.Popen(command, cwd=SERVERS, env=env, stdin=subprocess.DEVNULL)
        try:
            _wait(server, port, args.version)
            body = send_body(args.version)
            wrk(port, connections=args.connections, seconds=2, body=body, version=args.version)
            server.send_signal(signal.SIGUSR1)
            requests, cpu = 0, _cpu_seconds(server.pid)
            for round_ in range(args.rounds):
                result = wrk(
                    port,
                    connections=args.connections,
                    seconds=args.seconds,
                    body=body,
                    version=args.version,
                )
                requests += int(result.rps * args.seconds)
                load = os.getloadavg()[0]
                print(
                    f"round {round_ + 1}: {result.rps:.0f} req/s p50 {result.p50_ms:.1f} ms"
                    f" p99 {result.p99_ms:.1f} ms errors {result.errors} (load {load:.2f})"
                )
            cpu = _cpu_seconds(server.pid) - cpu
            print(f"server CPU per request: {cpu / requests * 1e6:.0f} us (user+system, /proc)")
            server.send_signal(signal.SIGUSR1)
            time.sleep(0.5)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=30)
        _report(json.loads(out.read_text()), requests)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait(server: subprocess.Popen[bytes], port: int, version: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if probe(port, version) is None:
                return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit("the server did not answer within 30 s")


def _report(data: dict[str, object], requests: int) -> None:
    collections = data["collections"]
    assert isinstance(collections, list)
    for generation in (0, 1, 2):
        pauses = [ms * 1000 for gen, ms, _ in collections if gen == generation]
        if pauses:
            print(
                f"gen {generation}: {len(pauses)} collections, median"
                f" {statistics.median(pauses):.2f} ms, max {max(pauses):.2f} ms,"
                f" total {sum(pauses):.0f} ms (thread CPU)"
            )
    steps = data["steps"]
    assert isinstance(steps, list)
    if steps:
        print(f"loop steps over the limit: {len(steps)}; the longest:")
        for spent, what in sorted(steps, reverse=True)[:8]:
            print(f"  {spent * 1000:.1f} ms  {what}")
    objects = data["objects"]
    assert isinstance(objects, dict)
    if len(objects) == 2 and requests:
        (before, _, kinds_before), (after, oldest, kinds) = objects["0"], objects["1"]
        grown = after - before
        print(
            f"GC-tracked objects: {before} -> {after} ({oldest} in generation 2) over"
            f" ~{requests} requests ({grown / requests:+.1f} each); most common:"
        )
        for kind, count in sorted(kinds.items(), key=lambda item: -item[1])[:12]:
            print(f"  {count:8d} {kind} ({count - kinds_before.get(kind, 0):+d})")


if __name__ == "__main__":
    main()
