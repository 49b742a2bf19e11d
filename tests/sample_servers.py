"""For the sample agents' tests: serving a sample, checking its card, fake model and rates APIs."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from accord import Agent, Client, create_app
from accord.types import (
    Artifact,
    DataPart,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from agents_for_tests import SAFETY_TIMEOUT
from conftest import SchemaErrors
from live_server import serve_app
from rpc import Json, served

CARD_PATH = "/.well-known/agent-card.json"


@asynccontextmanager
async def talk_to(agent: Agent) -> AsyncIterator[Client]:
    """Serve `agent` on loopback and yield accord's client of it."""
    with served(create_app(agent)) as base_url:
        async with Client(base_url, timeout=SAFETY_TIMEOUT) as client:
            yield client


async def check_card(agent: Agent, schema_errors: SchemaErrors) -> Json:
    """The agent's served card, checked against the 0.3 schema and for documented skills."""
    with served(create_app(agent)) as base_url:
        async with httpx.AsyncClient(timeout=SAFETY_TIMEOUT) as http:
            card: Json = (await http.get(base_url + CARD_PATH)).json()
    assert schema_errors("AgentCard", card) == []
    assert card["skills"], "a sample's card lists what it can do"
    for skill in card["skills"]:
        assert skill["description"] and skill["tags"] and skill["examples"], skill
    assert card["defaultInputModes"] and card["defaultOutputModes"]
    return card


async def follow(client: Client, text: str, **options: Any) -> list[StreamEvent]:
    """Every event of one streamed message, until the stream ends."""
    async with client.stream(text, **options) as stream:
        return [event async for event in stream]


def statuses(events: Sequence[StreamEvent]) -> list[tuple[TaskState, str]]:
    """The state and message text of each status update."""
    return [
        (e.status.state, e.status.message.text if e.status.message else "")
        for e in events
        if isinstance(e, TaskStatusUpdateEvent)
    ]


def artifact_updates(events: Sequence[StreamEvent]) -> list[TaskArtifactUpdateEvent]:
    return [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]


def task_id_of(events: Sequence[StreamEvent]) -> str:
    first = events[0]
    assert isinstance(first, Task), first
    return first.id


def finished(result: object, state: TaskState = TaskState.COMPLETED) -> Task:
    """`result` as a Task in `state` (with the reason in the failure message if not)."""
    assert isinstance(result, Task), result
    message = result.status.message.text if result.status.message else ""
    assert result.status.state is state, f"{result.status.state}: {message}"
    return result


def data_of(artifact: Artifact) -> Json:
    """The data of an artifact's (first) data part."""
    return next(p.data for p in artifact.parts if isinstance(p, DataPart))


def closed_port_url() -> str:
    """A loopback URL nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class FakeChat:
    """An OpenAI-compatible chat endpoint answering with scripted messages, keeping requests."""

    def __init__(self, replies: Sequence[Json]) -> None:
        self.replies = list(replies)
        self.requests: list[Json] = []
        self.authorizations: list[str | None] = []

    @staticmethod
    def text(content: str) -> Json:
        return {"role": "assistant", "content": content}

    @staticmethod
    def tool_call(name: str, **arguments: Any) -> Json:
        function = {"name": name, "arguments": json.dumps(arguments)}
        call = {"id": f"call-{name}", "type": "function", "function": function}
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    async def complete(self, request: Request) -> JSONResponse:
        self.requests.append(await request.json())
        self.authorizations.append(request.headers.get("authorization"))
        if not self.replies:
            return JSONResponse({"error": {"message": "no more scripted replies"}}, 500)
        return JSONResponse({"choices": [{"index": 0, "message": self.replies.pop(0)}]})

    @contextmanager
    def configured(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
        """Serve the fake and make it the samples' model; yields its API base URL."""
        app = Starlette(routes=[Route("/v1/chat/completions", self.complete, methods=["POST"])])
        with serve_app(app) as base_url:
            monkeypatch.setenv("ACCORD_LLM_BASE_URL", base_url + "/v1")
            monkeypatch.setenv("ACCORD_LLM_MODEL", "test-model")
            yield base_url + "/v1"
