"""A real webhook receiver for push notification tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agents_for_tests import Gate
from live_server import serve_app

LOOPBACK = ["127.0.0.1"]
"""The `push_allow` of servers whose webhooks are these receivers, on loopback."""


@dataclass
class Webhook:
    """A webhook receiver: records every POST; answers `failures` times with 500 first.

    `calls` holds each accepted notification's headers and parsed body, `received` its
    headers and exact bytes, `tries` the headers of every POST, refused ones included.
    """

    failures: int = 0
    calls: list[tuple[dict[str, str], dict[str, Any]]] = field(default_factory=list)
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    tries: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    gates: dict[str, Gate] = field(default_factory=dict)

    def reached(self, state: str) -> Gate:
        """Opens when a notification with the task in `state` arrived."""
        with self.lock:
            return self.gates.setdefault(state, Gate(f"notification {state}"))

    async def handle(self, request: Request) -> Response:
        raw = await request.body()
        body = json.loads(raw)
        headers = dict(request.headers)
        with self.lock:
            self.tries.append(headers)
            if self.failures > 0:
                self.failures -= 1
                return Response(status_code=500)
            self.calls.append((headers, body))
            self.received.append((headers, raw))
        state = self.state_of(body)
        if state is not None:
            self.reached(state).open()
        return Response(status_code=204)

    def state_of(self, body: dict[str, Any]) -> str | None:
        """The task state a notification tells of (None: it tells of none); here the body is
        the task, as 0.x webhooks get it."""
        state: str = body["status"]["state"]
        return state

    def states(self) -> list[str]:
        with self.lock:
            found = [self.state_of(body) for _, body in self.calls]
        return [state for state in found if state is not None]


@contextmanager
def receiving(hook: Webhook, host: str = "127.0.0.1") -> Iterator[str]:
    routes = [Route("/hook", hook.handle, methods=["POST"])]
    with serve_app(Starlette(routes=routes), host=host) as url:
        yield url + "/hook"
