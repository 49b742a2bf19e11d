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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    args = parser.parse_args()
    pin_load()
    upstream_port, gateway_port = free_port(), free_port()
    upstream_env = {**os.environ, "UPSTREAM_URL": f"http://{HOST}:{upstream_port}/"}
    upstream = [
        str(PROJECT_PYTHON), "-m", "uvicorn", "gateway_upstream:app", "--host", HOST,
        "--port", str(upstream_port), "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="accord-bench-") as workdir:
        store = "memory" if args.store == "memory" else f"sqlite:///{workdir}/gateway.db"
        with running(upstream, upstream_port, env=upstream_env) as (upstream_url, _):
            gateway = [str(PROJECT_PYTHON.with_name("accord")), "gateway", upstream_url,
                       "--host", HOST, "--port", str(gateway_port), "--store", store,
                       "--log-level", "warning"]  # fmt: skip
            with running(gateway, gateway_port, Path(workdir)) as (gateway_url, gateway_pid):
                ways = {
                    "direct, 0.3 JSON-RPC": (jsonrpc_0_3, upstream_url),
                    "gateway, 0.3 JSON-RPC": (jsonrpc_0_3, gateway_url),
                    "gateway, 1.0 HTTP+JSON": (rest_1_0, gateway_url),
                }
                measured: dict[str, list[float]] = {way: [] for way in ways}
                cpu: dict[str, float] = dict.fromkeys(ways, 0.0)
                for _ in range(args.rounds):
                    for way, (call, url) in ways.items():
                        before = cpu_seconds(gateway_pid)
                        measured[way] += latencies(call, url, args.requests)
                        cpu[way] += cpu_seconds(gateway_pid) - before
    print(f"{args.rounds} rounds x {args.requests} sequential sends, gateway store {args.store}")
    for way, values in measured.items():
        p50, p90, p99 = percentiles(values)
        used = cpu[way] * 1e6 / len(values)  # warm-ups included: an upper bound
        print(
            f"  {way:24} p50 {p50:6.2f} ms  p90 {p90:6.2f} ms  p99 {p99:6.2f} ms"
            f"  gateway CPU {used:5.0f} µs/request"
        )
    direct = percentiles(measured["direct, 0.3 JSON-RPC"])[0]
    for way in list(ways)[1:]:
        added = percentiles(measured[way])[0] - direct
        print(f"  added by the gateway ({way.split(', ')[1]}): p50 {added:+.2f} ms")


if __name__ == "__main__":
    sys.exit(main())
