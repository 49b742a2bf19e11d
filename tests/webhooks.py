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

from accord.codecs import v1_0_client
from accord.types import Task, TaskState, TaskStatusUpdateEvent, adapters
from agents_for_tests import Gate
from live_server import serve_app

LOOPBACK = ["127.0.0.1"]
"""The `push_allow` of servers whose webhooks are these receivers, on loopback."""
AGENT_URL = "https://agent.example/"
"""The issuer of a PushSender made without a server (one that learns it from no request)."""


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


def payload(body: dict[str, Any]) -> tuple[str, TaskState | None]:
    """The version whose push notification `body` is (0.3 posts the Task, spec 0.3 9.5; 1.0 a
    StreamResponse, spec 1.0 4.3.3), and the state of the task it carries, if it says one."""
    if body.get("kind") == "task":
        return "0.3", adapters.TASK.validate_python(body).status.state
    event = v1_0_client.CLIENT.stream.decode(body)
    return "1.0", event.status.state if isinstance(event, Task | TaskStatusUpdateEvent) else None


class NotificationHook(Webhook):
    """A webhook recording push notifications of either version by the task state they carry."""

    async def handle(self, request: Request) -> Response:
        raw = await request.body()
        body = json.loads(raw)
        _, state = payload(body)
        with self.lock:
            self.calls.append((dict(request.headers), body))
            self.received.append((dict(request.headers), raw))
        if state is not None:
            self.reached(state).open()
        return Response(status_code=204)

    def versions(self) -> set[str]:
        with self.lock:
            return {payload(body)[0] for _, body in self.calls}


@contextmanager
def receiving(hook: Webhook, host: str = "127.0.0.1") -> Iterator[str]:
    routes = [Route("/hook", hook.handle, methods=["POST"])]
    with serve_app(Starlette(routes=routes), host=host) as url:
        yield url + "/hook"
