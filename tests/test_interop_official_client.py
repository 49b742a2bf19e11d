"""The official a2a-sdk client against an accord server, over every interface accord serves
(gRPC included)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, create_client
from a2a.helpers import get_artifact_text, get_message_text
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from accord import Agent
from accord.samples import echo
from accord.types import new_id
from agents_for_tests import AsksThenCompletes, GatedStreamer, NeverFinishes, Switchboard
from live_server import serve_app

JSONRPC_1_0 = ("JSONRPC", "1.0")
HTTP_JSON_1_0 = ("HTTP+JSON", "1.0")
JSONRPC_0_3 = ("JSONRPC", "0.3")
HTTP_JSON_0_3 = ("HTTP+JSON", "0.3")
GRPC_1_0 = ("GRPC", "1.0")
GRPC_0_3 = ("GRPC", "0.3")
EVERY_INTERFACE = [JSONRPC_1_0, HTTP_JSON_1_0, JSONRPC_0_3, HTTP_JSON_0_3, GRPC_1_0, GRPC_0_3]
INTERFACE_IDS = [
    "jsonrpc-1.0",
    "http-json-1.0",
    "jsonrpc-0.3",
    "http-json-0.3",
    "grpc-1.0",
    "grpc-0.3",
]


@dataclass
class Served:
    """A live accord server and the executors the tests drive through it."""

    url: str
    never_finishes: NeverFinishes
    streamer: GatedStreamer


@pytest.fixture
def served() -> Iterator[Served]:
    """One accord agent: `never ...` never finishes, `gated ...` streams on demand, `reply ...`
    answers with a message, anything else is echoed in a task."""
    never_finishes, streamer = NeverFinishes(), GatedStreamer()
    executor = Switchboard(
        {
            "never": never_finishes,
            "gated": streamer,
            "reply": echo.message_agent.executor,
            "ask": AsksThenCompletes(),
        },
        default=echo.agent.executor,
    )
    extended = Agent(executor, name="Interop", description="The extended card.")
    agent = Agent(
        executor,
        name="Interop",
        push_notifications=True,
        extended_card=extended.card(""),
    )
    with serve_app(agent.app(grpc_port=0)) as url:
        yield Served(url, never_finishes, streamer)


def sdk_fails_on(failures: Mapping[tuple[str, str], tuple[str, type[Exception]]]) -> list[Any]:
    """Every interface, the SDK's client of each one in `failures` expected to fail (with the
    reason and exception given)."""

    def marks(i: tuple[str, str]) -> list[Any]:
        if i not in failures:
            return []
        reason, raises = failures[i]
        return [pytest.mark.xfail(strict=True, raises=raises, reason=reason)]

    return [
        pytest.param(i, id=name, marks=marks(i))
        for i, name in zip(EVERY_INTERFACE, INTERFACE_IDS, strict=True)
    ]


def every_interface_but_sdk_0_3_rest(reason: str, raises: type[Exception]) -> list[Any]:
    """Every interface, the SDK's 0.3 HTTP+JSON client expected to fail with `raises`."""
    return sdk_fails_on({HTTP_JSON_0_3: (reason, raises)})


@pytest.fixture(params=EVERY_INTERFACE, ids=INTERFACE_IDS)
def interface(request: pytest.FixtureRequest) -> tuple[str, str]:
    binding, version = request.param
    return binding, version


@asynccontextmanager
async def official_client(
    base_url: str,
    interface: tuple[str, str],
    *,
    streaming: bool = True,
    interceptors: list[Any] | None = None,
    **config: Any,
) -> AsyncIterator[Client]:
    """The official client for accord's real card, narrowed to the one interface under test
    (the SDK prefers 1.0 whenever the card offers it); `config` goes to its ClientConfig,
    `interceptors` (credentials) to the client."""
    binding, version = interface
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
    chosen = [
        i
        for i in card.supported_interfaces
        if i.protocol_binding == binding and i.protocol_version == version
    ]
    assert len(chosen) == 1, f"accord's card lists no {binding} {version} interface"
    del card.supported_interfaces[:]
    card.supported_interfaces.extend(chosen)
    if binding == "GRPC":
        config.setdefault("grpc_channel_factory", grpc.aio.insecure_channel)
    options = ClientConfig(streaming=streaming, supported_protocol_bindings=[binding], **config)
    client = await create_client(card, options, interceptors=interceptors)
    try:
        yield client
    finally:
        await client.close()


def user_message(text: str) -> Message:
    return Message(message_id=new_id(), role=Role.ROLE_USER, parts=[Part(text=text)])


def request(text: str, *, return_immediately: bool = False) -> SendMessageRequest:
    configuration = SendMessageConfiguration(return_immediately=return_immediately)
    return SendMessageRequest(message=user_message(text), configuration=configuration)


def kind(event: StreamResponse) -> str:
    return event.WhichOneof("payload") or ""


async def start_task(client: Client, text: str) -> Task:
    """A task started without waiting for it to finish."""
    events = [e async for e in client.send_message(request(text, return_immediately=True))]
    assert [kind(e) for e in events] == ["task"]
    return events[0].task


async def test_send_returns_the_completed_task(served: Served, interface: tuple[str, str]) -> None:
    async with official_client(served.url, interface, streaming=False) as client:
        [result] = [e async for e in client.send_message(request("hello"))]
    assert kind(result) == "task"
    assert result.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [get_artifact_text(a) for a in result.task.artifacts] == ["hello"]


async def test_send_returns_a_message(served: Served, interface: tuple[str, str]) -> None:
    async with official_client(served.url, interface, streaming=False) as client:
        [result] = [e async for e in client.send_message(request("reply hi"))]
    assert kind(result) == "message"
    assert result.message.role == Role.ROLE_AGENT
    assert get_message_text(result.message) == "reply hi"


async def test_stream_sends_every_event_in_order(
    served: Served, interface: tuple[str, str]
) -> None:
    async with official_client(served.url, interface) as client:
        events = [e async for e in client.send_message(request("hello"))]
    assert [kind(e) for e in events] == [
        "task",
        "status_update",
        "artifact_update",
        "status_update",
    ]
    assert events[0].task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert events[1].status_update.status.state == TaskState.TASK_STATE_WORKING
    assert get_artifact_text(events[2].artifact_update.artifact) == "hello"
    assert events[3].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert len({events[0].task.id, *(e.status_update.task_id for e in events[1::2])}) == 1


async def test_get_task_with_history_length(served: Served, interface: tuple[str, str]) -> None:
    async with official_client(served.url, interface, streaming=False) as client:
        [sent] = [e async for e in client.send_message(request("hello"))]
        task = await client.get_task(GetTaskRequest(id=sent.task.id, history_length=1))
    assert task.id == sent.task.id
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [get_message_text(m) for m in task.history] == ["hello"]
    assert [get_artifact_text(a) for a in task.artifacts] == ["hello"]


@pytest.mark.parametrize(
    "interface",
    [JSONRPC_1_0, HTTP_JSON_1_0, GRPC_1_0],
    ids=["jsonrpc-1.0", "http-json-1.0", "grpc-1.0"],
)
async def test_list_tasks(served: Served, interface: tuple[str, str]) -> None:
    async with official_client(served.url, interface, streaming=False) as client:
        [sent] = [e async for e in client.send_message(request("hello"))]
        listed = await client.list_tasks(ListTasksRequest(context_id=sent.task.context_id))
    assert [t.id for t in listed.tasks] == [sent.task.id]


async def test_cancel_a_running_task(served: Served, interface: tuple[str, str]) -> None:
    async with official_client(served.url, interface, streaming=False) as client:
        started = await start_task(client, "never ends")
        await served.never_finishes.started.wait()
        canceled = await client.cancel_task(CancelTaskRequest(id=started.id))
    assert canceled.id == started.id
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED


async def test_subscribe_to_a_running_task(served: Served, interface: tuple[str, str]) -> None:
    streamer = served.streamer
    async with official_client(served.url, interface, streaming=False) as client:
        started = await start_task(client, "gated stream")
    await streamer.started.wait()
    async with official_client(served.url, interface) as client:
        events = []
        async for event in client.subscribe(SubscribeToTaskRequest(id=started.id)):
            events.append(event)
            streamer.release_all()
    assert kind(events[0]) == "task"
    assert events[0].task.id == started.id
    assert [kind(e) for e in events[1:]] == ["artifact_update", "status_update"]
    assert get_artifact_text(events[1].artifact_update.artifact) == "chunk 0"
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def test_subscribe_to_a_task_waiting_for_input_follows_the_answer(
    served: Served, interface: tuple[str, str]
) -> None:
    async with official_client(served.url, interface, streaming=False) as client:
        [asked] = [e async for e in client.send_message(request("ask me"))]
        assert asked.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        answer = request("Ada")
        answer.message.task_id = asked.task.id
        answer.message.context_id = asked.task.context_id
        async with official_client(served.url, interface) as subscriber:
            events = []
            async for event in subscriber.subscribe(SubscribeToTaskRequest(id=asked.task.id)):
                events.append(event)
                if len(events) == 1:  # subscribed: now the first client answers
                    [done] = [e async for e in client.send_message(answer)]
    assert (kind(events[0]), events[0].task.id) == ("task", asked.task.id)
    assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert kind(events[-1]) == "status_update"
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    greetings = [
        get_artifact_text(e.artifact_update.artifact)
        for e in events[1:]
        if kind(e) == "artifact_update"
    ]
    assert greetings == ["Hello, Ada!"]


WEBHOOK = "https://hooks.example.com/a2a"


async def add_push_config(client: Client) -> TaskPushNotificationConfig:
    """A push config on a new task that never finishes, as the server answered its creation."""
    task = await start_task(client, "never ends")
    config = TaskPushNotificationConfig(task_id=task.id, id="hook-1", url=WEBHOOK, token="t")
    created = await client.create_task_push_notification_config(config)
    assert (created.task_id, created.id, created.url, created.token) == (
        task.id,
        "hook-1",
        WEBHOOK,
        "t",
    )
    return created


async def test_push_config_create_get(served: Served, interface: tuple[str, str]) -> None:
    async with official_client(served.url, interface, streaming=False) as client:
        created = await add_push_config(client)
        by_id = GetTaskPushNotificationConfigRequest(task_id=created.task_id, id=created.id)
        fetched = await client.get_task_push_notification_config(by_id)
    assert fetched == created


@pytest.mark.parametrize(
    "interface",
    every_interface_but_sdk_0_3_rest(
        "a2a-sdk 1.3.0's CompatRestTransport does not implement listing or deleting push configs",
        NotImplementedError,
    ),
)
async def test_push_config_list_delete(served: Served, interface: tuple[str, str]) -> None:
    async with official_client(served.url, interface, streaming=False) as client:
        created = await add_push_config(client)
        of_task = ListTaskPushNotificationConfigsRequest(task_id=created.task_id)
        listed = await client.list_task_push_notification_configs(of_task)
        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=created.task_id, id=created.id)
        )
        after = await client.list_task_push_notification_configs(of_task)
    assert list(listed.configs) == [created]
    assert list(after.configs) == []


async def test_extended_agent_card(served: Served, interface: tuple[str, str]) -> None:
    async with official_client(served.url, interface) as client:
        card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    assert card.name == "Interop"
    assert card.description == "The extended card."


async def test_unknown_task_is_task_not_found(served: Served, interface: tuple[str, str]) -> None:
    async with official_client(served.url, interface) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))
        with pytest.raises(TaskNotFoundError):
            await client.cancel_task(CancelTaskRequest(id="no-such-task"))


async def test_errors_of_a_finished_task_reach_the_client_by_type(
    served: Served, interface: tuple[str, str]
) -> None:
    async with official_client(served.url, interface, streaming=False) as client:
        [done] = [e async for e in client.send_message(request("hello"))]
        task = done.task
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task.id))
        more = request("more")
        more.message.task_id = task.id
        with pytest.raises(UnsupportedOperationError):
            [e async for e in client.send_message(more)]
