"""Server memory under large request bodies: one send just under the 10 MiB limit, then 20 at
once of 9 MiB each (`accord serve` of the echo agent, SQLite store), peak and retained RSS.

Run by hand: `.venv/bin/python bench/large_bodies.py`. Targets: one 10 MiB send adds at most
100 MB at its peak, the 20 parallel sends at most 300 MB (those past the body budget wait,
then get 503 + Retry-After), and at most 100 MB is still held afterwards.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx
from common import ACCORD_TASK_SQLITE, HOST, RunningServer, send_body, serve

MIB = 1024 * 1024
TARGETS_MB = {"one_peak": 100, "parallel_peak": 300, "parallel_after": 100}


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def _reset_peak(pid: int) -> None:
    """Start VmHWM again from the current RSS (Linux: writing 5 to clear_refs)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def _body(size: int) -> bytes:
    envelope = send_body("0.3", "")
    return envelope.replace(b'"text": ""', b'"text": "' + b"x" * (size - len(envelope) - 8) + b'"')


async def _send(http: httpx.AsyncClient, url: str, body: bytes) -> int:
    response = await http.post(url, content=body, headers={"Content-Type": "application/json"})
    return response.status_code


async def measure(server: RunningServer) -> dict[str, object]:
    url = f"http://{HOST}:{server.port}/"
    base = server.rss_kib()
    _reset_peak(server.pid)
    async with httpx.AsyncClient(timeout=120) as http:
        one = await _send(http, url, _body(10 * MIB - 1024))
        one_peak = _peak_kib(server.pid) - base
        _reset_peak(server.pid)
        before = server.rss_kib()
        statuses = await asyncio.gather(*(_send(http, url, _body(9 * MIB)) for _ in range(20)))
        parallel_peak = _peak_kib(server.pid) - before
        await asyncio.sleep(1)
        after = server.rss_kib() - base
    return {
        "one_status": one,
        "one_peak_mb": round(one_peak / 1024),
        "parallel_statuses": {s: statuses.count(s) for s in set(statuses)},
        "parallel_peak_mb": round(parallel_peak / 1024),
        "parallel_after_mb": round(after / 1024),
        "targets_mb": TARGETS_MB,
    }


def met(result: dict[str, object]) -> bool:
    """Whether `result` meets every target."""
    return all(int(str(result[f"{name}_mb"])) <= limit for name, limit in TARGETS_MB.items())


def main() -> None:
    with serve(ACCORD_TASK_SQLITE) as server:
        result = asyncio.run(measure(server))
    json.dump({**result, "met": met(result)}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
