"""What the framework adapters' tests share: the framework or a clean skip, an adapted agent
served on loopback, and the official a2a-sdk client talking to it in 1.0 and 0.3."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType
from typing import Any

import httpx
import pytest
from a2a.client import Client
from a2a.helpers import get_artifact_text, get_message_text
from a2a.types import (
    Artifact,
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from pydantic import BaseModel

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


SECRET = "the database password is hunter2"
"""What a failing framework says, which its caller must never see."""
PNG = b"\x89PNG\r\n\x1a\n not really an image"
"""The image callers send, which the agents under test answer reversed."""


async def card_of(url: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        card: dict[str, Any] = (await http.get(f"{url}/.well-known/agent-card.json")).json()
    return card


def skills_of(card: dict[str, Any]) -> list[tuple[str, str]]:
    return [(skill["id"], skill["description"]) for skill in card["skills"]]


async def flipped_image(url: str, interface: tuple[str, str], text: str) -> Task:
    """The task of sending `text` with PNG, once its answer holds PNG reversed."""
    async with sdk(url, interface) as client:
        image = Part(raw=PNG, media_type="image/png", filename="in.png")
        task = last_task(await exchange(client, message(text, image)))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert answered_files(task) == [(PNG[::-1], "image/png")]
    return task


async def check_cancel_stops_the_run(agent: Agent, gate: Gate, interface: tuple[str, str]) -> None:
    """Canceling the task `wait` starts (the framework's code held at `gate`) cancels that
    code."""
    with served(agent) as url:
        async with sdk(url, interface, streaming=False) as client:
            started = await start(client, message("wait"))
            await gate.wait(gate.reached)
            canceled = await client.cancel_task(CancelTaskRequest(id=started.id))
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    await gate.wait(gate.cancelled)


class Held:
    """The framework's code held while it answers `text`, until the test releases it; and
    whether it took up another message meanwhile."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.reached = threading.Event()
        self.released = threading.Event()
        self.other = threading.Event()  # another message reached the framework's code

    async def hold(self, said: str) -> None:
        """Called by the framework's code with what the caller said last: waits on `text`."""
        if said != self.text:
            self.other.set()
            return
        self.reached.set()
        assert await asyncio.to_thread(self.released.wait, SAFETY_TIMEOUT), "never released"


OVERLAP_WAIT = 0.5
"""How long a test waits for a second message of a context to reach the framework while the
first is held there: it should not, so a test that passes waits this long once."""


async def turns_of_one_context(
    url: str, interface: tuple[str, str], held: Held
) -> tuple[list[str], bool]:
    """After `one`, the answers to `held.text` and to `two`, both sent in that context at
    once, then the answer to `three`, sent in that context once both ended.

    `two` is sent while the framework is held answering `held.text`. Should `two` reach the
    framework meanwhile (two runs of one context at once: the second item returned), it is
    let finish first, so that the held run, ending last, shows whether it overwrites `two`'s
    turn."""
    for event in (held.reached, held.released, held.other):
        event.clear()
    async with sdk(url, interface) as client, sdk(url, interface, streaming=False) as other:
        context_id = last_task(await exchange(client, message("one"))).context_id
        first = asyncio.create_task(exchange(client, message(held.text, context_id=context_id)))
        await asyncio.to_thread(held.reached.wait, SAFETY_TIMEOUT)
        held.other.clear()
        second = await start(other, message("two", context_id=context_id))
        overlapped = await asyncio.to_thread(held.other.wait, OVERLAP_WAIT)
        if overlapped:
            second = await ended(other, second)
        held.released.set()
        answers = [text_of(last_task(await first))]
        second = await ended(other, second)
        answers.append(text_of(second))
        third = last_task(await exchange(client, message("three", context_id=context_id)))
    return [*answers, text_of(third)], overlapped


async def ended(client: Client, task: Task) -> Task:
    """`task` once it ended, read again until then."""
    async with asyncio.timeout(SAFETY_TIMEOUT):
        while task.status.state not in ENDED:
            await asyncio.sleep(0.02)
            task = await client.get_task(GetTaskRequest(id=task.id))
    return task


ENDED = (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED)


async def check_failure_shows_a_reference(
    url: str, interface: tuple[str, str], text: str, caplog: pytest.LogCaptureFixture
) -> None:
    """`text` makes the framework fail with SECRET: the task fails naming a reference, and
    only the log has SECRET."""
    caplog.set_level(logging.ERROR)
    async with sdk(url, interface) as client:
        task = last_task(await exchange(client, message(text)))
    assert task.status.state == TaskState.TASK_STATE_FAILED
    said = status_text(task)
    assert "reference" in said and SECRET not in said
    assert any(SECRET in str(r.exc_info and r.exc_info[1]) for r in caplog.records)


@dataclass
class Answer:
    """A streamed answer: whether each artifact update appends, the notes along the way, the
    task as it ends, and its text."""

    appends: list[bool]
    notes: list[str]
    task: Task

    @property
    def text(self) -> str:
        return text_of(self.task)


async def streamed(url: str, interface: tuple[str, str], text: str) -> Answer:
    """The streamed answer to `text`, which completes the task."""
    async with sdk(url, interface) as client:
        events = await exchange(client, message(text))
    task = last_task(events)
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    appends = [e.artifact_update.append for e in events if kind(e) == "artifact_update"]
    return Answer(appends, notes(events), task)


async def asked_then_answered(
    url: str,
    interface: tuple[str, str],
    question: str,
    answer: str,
    *,
    streaming: bool = True,
    then: str = "",
) -> tuple[Task, Task, Task | None]:
    """`question` makes the agent ask for input, `answer` (sent in that task) completes it;
    `then`, sent afterwards in the same context, shows what the context kept."""
    async with sdk(url, interface, streaming=streaming) as client:
        asked = last_task(await exchange(client, message(question)))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        reply = message(answer, context_id=asked.context_id, task_id=asked.id)
        done = last_task(await exchange(client, reply))
        later = message(then, context_id=asked.context_id)
        after = last_task(await exchange(client, later)) if then else None
    assert done.id == asked.id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    return asked, done, after


async def booking(url: str, interface: tuple[str, str], *, streaming: bool) -> str:
    """The booking dialogue the LangGraph and ADK agents under test share: `book` asks
    "Which city?", `Oslo` in that task books it; returns the answer to `hi`, sent afterwards
    in the same context (what the context kept shows in its turn count)."""
    asked, booked, later = await asked_then_answered(
        url, interface, "book", "Oslo", streaming=streaming, then="hi"
    )
    assert status_text(asked) == "Which city?"
    assert text_of(booked) == "Booked Oslo"
    assert later is not None
    return text_of(later)


async def conversation(
    url: str,
    interface: tuple[str, str],
    said: Sequence[str],
    *,
    streaming: bool = True,
    elsewhere: str = "",
) -> list[str]:
    """The answers to `said`, each sent in the first one's context, then (when given) the
    answer to `elsewhere`, sent in a context of its own."""
    answers: list[str] = []
    context_id = ""
    async with sdk(url, interface, streaming=streaming) as client:
        for text in said:
            task = last_task(await exchange(client, message(text, context_id=context_id)))
            context_id = task.context_id
            answers.append(text_of(task))
        if elsewhere:
            answers.append(text_of(last_task(await exchange(client, message(elsewhere)))))
    return answers


class Forecast(BaseModel):
    """The structured output of the weather agents under test."""

    city: str
    celsius: int


FORECAST = {"city": "Oslo", "celsius": -3}


async def check_forecast_is_data(agent: Agent, interface: tuple[str, str]) -> None:
    """`agent`'s structured output (FORECAST) reaches the caller as a data part."""
    with served(agent) as url:
        async with sdk(url, interface) as client:
            task = last_task(await exchange(client, message("weather in Oslo?")))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert answered_data(task) == [FORECAST]
