"""accord's client against the official a2a-sdk server: 1.0 and 0.3, JSON-RPC and HTTP+JSON."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from a2a.helpers import get_message_text, new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, Part
from starlette.applications import Starlette

from accord import Client
from accord.errors import TaskNotFound
from accord.types import Message, Task, TaskState
from agents_for_tests import SAFETY_TIMEOUT, Gate
from live_server import serve_app


class OfficialEcho(AgentExecutor):
    """Written the SDK's way: `reply ...` is answered with a message; `hold ...` works until
    `release` opens (or the task is canceled); anything else gets a task (working, one artifact
    repeating the text, completed)."""

    def __init__(self) -> None:
        self.release = Gate("release")
        self.holding = Gate("holding")

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = get_message_text(context.message)
        if text.startswith("reply"):
            await event_queue.enqueue_event(new_text_message(text, context_id=context.context_id))
            return
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue=event_queue, task_id=task.id, context_id=task.context_id)
        await updater.start_work()
        if text.startswith("hold"):
            self.holding.open()
            await self.release.wait(timeout=None)
        await updater.add_artifact(parts=[Part(text=text)])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        assert task is not None
        updater = TaskUpdater(event_queue=event_queue, task_id=task.id, context_id=task.context_id)
        await updater.cancel()


INTERFACES = [("JSONRPC", "0.3"), ("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("HTTP+JSON", "0.3")]


@pytest.fixture
def official_echo() -> OfficialEcho:
    return OfficialEcho()


@pytest.fixture(params=INTERFACES, ids=lambda i: f"{i[0]}-{i[1]}")
def official_url(request: pytest.FixtureRequest, official_echo: OfficialEcho) -> Iterator[str]:
    card = AgentCard(
        name="Official echo",
        description="The official SDK serving an echo executor.",
        version="1.0.0",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=True),
    )
    binding, version = request.param
    handler = DefaultRequestHandler(
        agent_executor=official_echo, task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = create_agent_card_routes(card)
    routes.extend(create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True))
    routes.extend(create_rest_routes(handler, enable_v0_3_compat=True))
    with serve_app(Starlette(routes=routes)) as url:
        # The card routes serialize `card` on every request: it can learn its port now, and
        # it lists only the interface under test, so that is the one accord's client picks.
        interface = AgentInterface(protocol_binding=binding, protocol_version=version, url=url)
        card.supported_interfaces.append(interface)
        yield url


async def test_card_resolution(official_url: str) -> None:
    async with Client(official_url) as client:
        card = await client.get_card()
    assert card.name == "Official echo"
    assert card.capabilities.streaming


async def test_send_returns_a_task(official_url: str) -> None:
    async with Client(official_url) as client:
        task = await client.send("hello")
        fetched = await client.get_task(task.id) if isinstance(task, Task) else None
    assert isinstance(task, Task)
    assert task.status.state == TaskState.COMPLETED
    assert [a.text for a in task.artifacts] == ["hello"]
    assert fetched is not None and fetched.status.state == TaskState.COMPLETED


async def test_send_returns_a_message(official_url: str) -> None:
    async with Client(official_url) as client:
        reply = await client.send("reply hi")
    assert isinstance(reply, Message)
    assert reply.text == "reply hi"


async def test_stream(official_url: str) -> None:
    async with Client(official_url) as client:
        events = [event async for event in client.stream("hello")]
    assert isinstance(events[0], Task)
    assert events[-1].status.state == TaskState.COMPLETED  # type: ignore[union-attr]


async def test_unknown_task_is_task_not_found(official_url: str) -> None:
    async with Client(official_url) as client:
        with pytest.raises(TaskNotFound):
            await client.get_task("no-such-task")


async def test_cancel_stops_a_running_task(official_url: str, official_echo: OfficialEcho) -> None:
    async with Client(official_url) as client:
        task = await client.send("hold on", blocking=False)
        assert isinstance(task, Task)
        await official_echo.holding.wait()
        canceled = await client.cancel_task(task.id)
        official_echo.release.open()
    assert canceled.status.state == TaskState.CANCELED


async def test_resubscribe_follows_a_running_task(
    official_url: str, official_echo: OfficialEcho
) -> None:
    async with Client(official_url) as client:
        task = await client.send("hold tight", blocking=False)
        assert isinstance(task, Task)
        await official_echo.holding.wait()
        async with asyncio.timeout(SAFETY_TIMEOUT):
            events = client.resubscribe(task.id)
            first = await anext(events)
            official_echo.release.open()
            rest = [event async for event in events]
    assert getattr(first, "id", getattr(first, "task_id", None)) == task.id
    assert rest[-1].status.state == TaskState.COMPLETED  # type: ignore[union-attr]
