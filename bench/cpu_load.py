"""A running server's CPU time per completed request under wrk, the figure to compare builds by."""

from __future__ import annotations

from dataclasses import dataclass

from common import RunningServer
from load import wrk


@dataclass(frozen=True)
class CpuPerRequest:
    cpu_us: float  # the server's user plus system CPU time per completed request
    rps: float
    errors: int


def cpu_per_request(
    server: RunningServer, *, body: bytes, path: str, version: str, seconds: int, connections: int
) -> CpuPerRequest:
    """Warm `server` up for a second, then load it for `seconds` and count its CPU time.

    On a shared machine the CPU time per request moves much less with other load than the rate.
    """
    wrk(server.port, connections=connections, seconds=1, body=body, path=path, version=version)
    before = server.cpu_seconds()
    result = wrk(
        server.port, connections=connections, seconds=seconds, body=body, path=path,
        version=version,
    )  # fmt: skip
    cpu = server.cpu_seconds() - before
    return CpuPerRequest(cpu / result.requests * 1e6, result.rps, result.errors)
