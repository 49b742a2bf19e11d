"""Health probes: `/healthz` (the process answers) and `/readyz` (store and bus reachable)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from functools import partial

from starlette.types import ASGIApp, Receive, Scope, Send

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


class HealthProbes:
    """ASGI middleware answering the two probes before anything else runs (host check,
    authentication, limits; the cards do not list them): a probe says nothing about the
    agent. `/healthz` is 200 while the process serves requests; `/readyz` is 200 when
    `readiness` finds no problem, else 503 naming it (JSON either way). Other paths go on to
    `app`.
    """

    def __init__(self, app: ASGIApp, readiness: Readiness) -> None:
        self.app = app
        self.readiness = readiness

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path") if scope["type"] == "http" else None
        if path == HEALTH_PATH:
            await _answer(send, 200, {"status": "ok"})
        elif path == READY_PATH:
            problem = await self.readiness.problem()
            if problem is None:
                await _answer(send, 200, {"status": "ready"})
            else:
                await _answer(send, 503, {"status": "unready", "reason": problem})
        else:
            await self.app(scope, receive, send)


async def _answer(send: Send, status: int, body: dict[str, str]) -> None:
    content = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(content)).encode()),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})
