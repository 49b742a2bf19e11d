"""HTTP load with wrk (pinned to the load CPU): requests per second and latency percentiles."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass

from common import BENCH, HOST, LOAD_CPU

SCRIPT = BENCH / "lua" / "request.lua"


@dataclass(frozen=True)
class LoadResult:
    requests: int  # completed
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int


def wrk(
    port: int,
    *,
    connections: int,
    seconds: int,
    body: bytes = b"",
    path: str = "/",
    version: str = "0.3",
) -> LoadResult:
    """Run wrk with one thread and `connections` connections; POST `body` if given, else GET."""
    with tempfile.NamedTemporaryFile(suffix=".json") as body_file:
        body_file.write(body)
        body_file.flush()
        env = dict(
            os.environ,
            BENCH_METHOD="POST" if body else "GET",
            BENCH_PATH=path,
            BENCH_BODY_FILE=body_file.name if body else "",
            BENCH_A2A_VERSION=version,
        )
        command = [
            "taskset", "-c", str(LOAD_CPU), "wrk", "-t1", f"-c{connections}",
            f"-d{seconds}s", "--timeout", "10s", "-s", str(SCRIPT), f"http://{HOST}:{port}{path}",
        ]  # fmt: skip
        output = subprocess.run(
            command, env=env, capture_output=True, text=True, check=True, timeout=seconds + 30
        ).stdout
    line = next(x for x in output.splitlines() if x.startswith("BENCH_JSON "))
    data = json.loads(line.removeprefix("BENCH_JSON "))
    return LoadResult(
        requests=data["requests"],
        rps=data["requests"] / (data["duration_us"] / 1e6),
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        errors=data["errors"] + data["non_2xx"],
    )
