"""The latency `accord gateway` adds to a request, against calling its upstream directly.

`python bench/gateway.py [--requests N] [--rounds R] [--store memory|sqlite]`: the official
a2a-sdk echo agent serving only A2A 0.3 over JSON-RPC (bench/servers/gateway_upstream.py) and
`accord gateway` in front of it, each a process of its own pinned to the server CPU; one
client on the load CPU sends N blocking `message/send` calls one after another on one
keep-alive connection, R rounds alternating direct and through the gateway (0.3 JSON-RPC, and
1.0 HTTP+JSON, which the upstream does not speak). Prints p50, p90 and p99 per way and the
p50 the gateway adds. Sequential calls measure latency, not throughput: the other load of a
shared machine moves them less than it moves a rate.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from common import (
    HOST,
    PROJECT_PYTHON,
    SERVER_CPU,
    SERVERS,
    free_port,
    pin_load,
    send_body,
    version_headers,
)

REST_HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}


@contextmanager
def running(
    command: list[str], port: int, cwd: Path = SERVERS, env: dict[str, str] | None = None
) -> Iterator[tuple[str, int]]:
    """`command` pinned to the server CPU until the block ends; its URL once its card answers,
    and its process id."""
    url = f"http://{HOST}:{port}"
    process = subprocess.Popen(
        ["taskset", "-c", str(SERVER_CPU), *command], cwd=cwd, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited with {process.returncode}")
            try:
                if httpx.get(url + "/.well-known/agent-card.json").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{' '.join(command)} did not start")
            time.sleep(0.1)
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def jsonrpc_0_3(http: httpx.Client, url: str) -> None:
    response = http.post(url + "/", content=send_body("0.3"), headers=version_headers("0.3"))
    assert response.json()["result"]["status"]["state"] == "completed", response.text


def rest_1_0(http: httpx.Client, url: str) -> None:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    body = json.dumps({"message": message}).encode()
    response = http.post(url + "/message:send", content=body, headers=REST_HEADERS)
    assert response.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED", response.text


def latencies(call: object, url: str, requests: int) -> list[float]:
    """Milliseconds of each of `requests` calls, after a warm-up of a tenth as many."""
    assert callable(call)
    with httpx.Client(timeout=30) as http:
        for _ in range(max(requests // 10, 10)):
            call(http, url)
        measured = []
        for _ in range(requests):
            start = time.perf_counter()
            call(http, url)
            measured.append((time.perf_counter() - start) * 1000)
    return measured


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentiles(values: list[float]) -> tuple[float, float, float]:
    cuts = statistics.quantiles(values, n=100)
    return cuts[49], cuts[89], cuts[98]


WAYS = ("direct, 0.3 JSON-RPC", "gateway, 0.3 JSON-RPC", "gateway, 1.0 HTTP+JSON")


def measure(requests: int, rounds: int, store: str = "memory") -> list[dict[str, object]]:
    """One row per way: its p50, p90 and p99 (ms), the gateway's CPU time per request (µs, its
    warm-ups included: an upper bound) and, through the gateway, the p50 it adds to the direct
    way's."""
    upstream_port, gateway_port = free_port(), free_port()
    upstream_env = {**os.environ, "UPSTREAM_URL": f"http://{HOST}:{upstream_port}/"}
    upstream = [
        str(PROJECT_PYTHON), "-m", "uvicorn", "gateway_upstream:app", "--host", HOST,
        "--port", str(upstream_port), "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="accord-bench-") as workdir:
        store_url = "memory" if store == "memory" else f"sqlite:///{workdir}/gateway.db"
        with running(upstream, upstream_port, env=upstream_env) as (upstream_url, _):
            gateway = [str(PROJECT_PYTHON.with_name("accord")), "gateway", upstream_url,
                       "--host", HOST, "--port", str(gateway_port), "--store", store_url,
                       "--log-level", "warning"]  # fmt: skip
            with running(gateway, gateway_port, Path(workdir)) as (gateway_url, gateway_pid):
                calls = dict(zip(WAYS, (jsonrpc_0_3, jsonrpc_0_3, rest_1_0), strict=True))
                urls = dict(zip(WAYS, (upstream_url, gateway_url, gateway_url), strict=True))
                measured: dict[str, list[float]] = {way: [] for way in WAYS}
                cpu: dict[str, float] = dict.fromkeys(WAYS, 0.0)
                for _ in range(rounds):
                    for way in WAYS:
                        before = cpu_seconds(gateway_pid)
                        measured[way] += latencies(calls[way], urls[way], requests)
                        cpu[way] += cpu_seconds(gateway_pid) - before
    direct = percentiles(measured[WAYS[0]])[0]
    rows: list[dict[str, object]] = []
    for way in WAYS:
        p50, p90, p99 = percentiles(measured[way])
        count = len(measured[way])
        row: dict[str, object] = {"way": way, "store": store, "p50_ms": p50, "p90_ms": p90,
                                  "p99_ms": p99, "requests": count,
                                  "gateway_cpu_us": cpu[way] * 1e6 / count}  # fmt: skip
        if way != WAYS[0]:
            row["added_p50_ms"] = p50 - direct
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    args = parser.parse_args()
    pin_load()
    rows = measure(args.requests, args.rounds, args.store)
    print(f"{args.rounds} rounds x {args.requests} sequential sends, gateway store {args.store}")
    for row in rows:
        added = f"  adds {row['added_p50_ms']:+.2f} ms" if "added_p50_ms" in row else ""
        print(
            f"  {row['way']:24} p50 {row['p50_ms']:6.2f} ms  p90 {row['p90_ms']:6.2f} ms"
            f"  p99 {row['p99_ms']:6.2f} ms  gateway CPU {row['gateway_cpu_us']:5.0f} µs/req"
            f"{added}"
        )


if __name__ == "__main__":
    sys.exit(main())
