"""What the framework adapters' tests share: the framework or a clean skip, an adapted agent
served on loopback, and the official a2a-sdk client talking to it in 1.0 and 0.3."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from importlib import import_module
from types import ModuleType
from typing import Any

import pytest
from a2a.client import Client
from a2a.helpers import get_artifact_text, get_message_text
from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)

from accord import Agent
from accord.core import Inbound, Principal
from accord.types import new_id
from agents_for_tests import SAFETY_TIMEOUT
from live_server import serve_app
from services import services_required
from test_interop_official_client import official_client

INTERFACES = [
    pytest.param(("JSONRPC", "1.0"), id="1.0"),
    pytest.param(("JSONRPC", "0.3"), id="0.3"),
]
"""The versions each adapted agent is driven in by the official client."""

CALLER = Principal("alice", scheme="test")
"""Who every request to an adapted agent comes from."""


def framework(module: str, extra: str) -> ModuleType:
    """The framework `module`; without it the test module skips, or fails when services are
    required (ACCORD_REQUIRE_SERVICES=1, as in CI, which installs every extra)."""
    try:
        return import_module(module)
    except ImportError as exc:
        message = f"{module} is not installed (the `{extra}` extra): {exc}"
        if services_required():
            pytest.fail(f"{message} and ACCORD_REQUIRE_SERVICES=1", pytrace=False)
        pytest.skip(message, allow_module_level=True)


class Alice:
    """An authenticator that takes every caller for `CALLER`."""

    async def authenticate(self, inbound: Inbound) -> Principal:
        return CALLER


@contextmanager
def served(agent: Agent) -> Iterator[str]:
    """`agent` served on a loopback port, its callers authenticated as `CALLER`."""
    with serve_app(agent.app(authenticator=Alice())) as url:
        yield url


@asynccontextmanager
async def sdk(
    url: str, interface: tuple[str, str], *, streaming: bool = True
) -> AsyncIterator[Client]:
    """The official client of the agent at `url`, speaking `interface`."""
    async with official_client(url, interface, streaming=streaming) as client:
        yield client


def message(
    *parts: Part | str, context_id: str = "", task_id: str = "", role: Role = Role.ROLE_USER
) -> Message:
    """A user's message of text and parts, in a context and a task when given."""
    return Message(
        message_id=new_id(),
        role=role,
        parts=[Part(text=p) if isinstance(p, str) else p for p in parts],
        context_id=context_id,
        task_id=task_id,
    )


async def exchange(client: Client, sent: Message) -> list[StreamResponse]:
    """Every event the agent answers `sent` with."""
    request = SendMessageRequest(message=sent, configuration=SendMessageConfiguration())
    async with asyncio.timeout(SAFETY_TIMEOUT):
        return [event async for event in client.send_message(request)]


async def start(client: Client, sent: Message) -> Task:
    """The task `sent` starts, without waiting for it to go on."""
    configuration = SendMessageConfiguration(return_immediately=True)
    request = SendMessageRequest(message=sent, configuration=configuration)
    async with asyncio.timeout(SAFETY_TIMEOUT):
        [event] = [event async for event in client.send_message(request)]
    return event.task


def kind(event: StreamResponse) -> str:
    return event.WhichOneof("payload") or ""


def last_task(events: list[StreamResponse]) -> Task:
    """The task as the events leave it (a blocking send's task, or the stream's last state)."""
    task = next(e.task for e in events if kind(e) == "task")
    for event in events:
        if kind(event) == "status_update":
            task.status.CopyFrom(event.status_update.status)
        elif kind(event) == "artifact_update":
            merge(task, event.artifact_update.artifact, append=event.artifact_update.append)
    return task


def merge(task: Task, artifact: Artifact, *, append: bool) -> None:
    for known in task.artifacts:
        if known.artifact_id == artifact.artifact_id:
            if append:
                known.parts.extend(artifact.parts)
            else:
                known.CopyFrom(artifact)
            return
    task.artifacts.append(artifact)


def text_of(task: Task) -> str:
    """The text of the task's artifacts, in order."""
    return "".join(get_artifact_text(a, delimiter="") for a in task.artifacts)


def notes(events: list[StreamResponse]) -> list[str]:
    """The text of the `working` status messages the agent sent along the way."""
    return [
        get_message_text(e.status_update.status.message)
        for e in events
        if kind(e) == "status_update"
        and e.status_update.status.state == TaskState.TASK_STATE_WORKING
        and e.status_update.status.HasField("message")
    ]


def status_text(task: Task) -> str:
    return get_message_text(task.status.message) if task.status.HasField("message") else ""


class Gate:
    """A point a framework's code reaches in the server's thread and the test waits for."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.cancelled = threading.Event()

    async def hold(self) -> None:
        """Called by the framework's code: wait until cancelled, which is recorded."""
        self.reached.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise

    async def wait(self, event: threading.Event) -> None:
        assert await asyncio.to_thread(event.wait, SAFETY_TIMEOUT), "the framework never got there"


def answered_files(task: Task) -> list[tuple[bytes, str]]:
    """The files among the task's artifacts: their bytes and media type."""
    return [(p.raw, p.media_type) for a in task.artifacts for p in a.parts if p.HasField("raw")]


def answered_data(task: Task) -> list[dict[str, Any]]:
    """The data parts among the task's artifacts."""
    from google.protobuf.json_format import MessageToDict

    return [
        MessageToDict(p.data.struct_value)
        for a in task.artifacts
        for p in a.parts
        if p.HasField("data")
    ]
