"""Health probes: `/healthz` (the process answers) and `/readyz` (store and bus reachable)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from functools import partial

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from accord.runtime import TaskRuntime

log = logging.getLogger("accord.server")

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
CHECK_TIMEOUT = 2.0
"""Seconds a readiness check waits for the store or the bus before calling it unreachable."""

_PROBE_TASK_ID = "accord-readiness-probe"


class Readiness:
    """Whether an app can take work: started, not shutting down, its store and bus reachable
    (each answering within `CHECK_TIMEOUT` seconds). The app's lifespan sets `started` and
    `stopping`."""

    def __init__(self, runtime: TaskRuntime) -> None:
        self.runtime = runtime
        self.started = False
        self.stopping = False

    async def problem(self) -> str | None:
        """Why the app cannot take work now, or None when it can."""
        if not self.started:
            return "starting"
        if self.stopping:
            return "shutting down"
        checks: dict[str, Callable[[], Awaitable[object]]] = {
            "store": partial(self.runtime.store.get, _PROBE_TASK_ID),
            "bus": self.runtime.bus.check,
        }
        for name, check in checks.items():
            try:
                await asyncio.wait_for(check(), CHECK_TIMEOUT)
            except Exception as exc:  # any failure to answer means not ready
                log.warning("readiness: the %s is unreachable: %r", name, exc)
                return f"{name} unreachable"
        return None


def probe_routes(readiness: Readiness) -> list[Route]:
    """`GET /healthz`: 200 while the process serves requests; `GET /readyz`: 200 when
    `readiness` finds no problem, else 503 naming it (JSON either way). They are plain routes:
    no authentication or limit applies (the pipeline's), the cards do not list them, and the
    app's host check lets them through for any `Host` (a container platform probes an
    address). Routed after accord's own, so they cost the requests before them nothing."""

    async def healthz(request: Request) -> Response:
        return _answer(200, {"status": "ok"})

    async def readyz(request: Request) -> Response:
        problem = await readiness.problem()
        if problem is None:
            return _answer(200, {"status": "ready"})
        return _answer(503, {"status": "unready", "reason": problem})

    return [
        Route(HEALTH_PATH, healthz, methods=["GET"]),
        Route(READY_PATH, readyz, methods=["GET"]),
    ]


PROBE_PATHS = frozenset({HEALTH_PATH, READY_PATH})


def _answer(status: int, body: dict[str, str]) -> Response:
    return Response(
        json.dumps(body), status, {"Cache-Control": "no-store"}, media_type="application/json"
    )
