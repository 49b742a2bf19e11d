"""The client over gRPC (1.0 and 0.3) against accord's own gRPC binding: every operation, errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import accord
from accord import A2AClientError, Client, SyncClient, create_app
from accord.client.transports.grpc import channel_target
from accord.errors import (
    ExtendedAgentCardNotConfigured,
    InvalidParams,
    PushNotificationNotSupported,
    TaskNotCancelable,
    TaskNotFound,
)
from accord.samples import echo
from accord.types import (
    Message,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from agents_for_tests import NeverFinishes, Switchboard
from live_server import serve_app

VERSIONS = pytest.mark.parametrize("version", ["1.0", "0.3"])
HOOK = PushNotificationConfig(url="https://hooks.example/a", id="c-1", token="t")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """An agent echoing its text, or working until canceled when it starts with `wait`."""
    extended = echo.agent.card("").model_copy(update={"name": "Echo (extended)"})
    agent = accord.Agent(
        Switchboard({"wait": NeverFinishes()}, default=echo.agent.executor),
        name="Echo",
        push_notifications=True,
        extended_card=extended,
    )
    with serve_app(create_app(agent, grpc_port=0)) as served:
        yield served


@pytest.fixture(scope="module")
def plain_url() -> Iterator[str]:
    """An agent without push notifications or an extended card."""
    with serve_app(create_app(echo.agent, grpc_port=0)) as served:
        yield served


def texts(task: Task) -> list[str]:
    return [p.text for a in task.artifacts or () for p in a.parts if isinstance(p, TextPart)]


async def until_the_end(events: accord.client.EventStream) -> list[StreamEvent]:
    return [event async for event in events]


async def test_the_card_order_picks_grpc_1_0(url: str) -> None:
    async with Client(url, transport="GRPC") as client:
        task = await client.send("hello")
        interface = client.interface
    assert interface is not None
    assert (interface.transport, interface.protocol_version) == ("GRPC", "1.0")
    assert channel_target(interface.url) == (interface.url, False)
    assert isinstance(task, Task)
    assert texts(task) == ["hello"]


@VERSIONS
async def test_send_get_and_stream(url: str, version: str) -> None:
    async with Client(url, transport="GRPC", version=version) as client:
        task = await client.send("hello")
        assert isinstance(task, Task)
        fetched = await client.get_task(task.id, history_length=1)
        events = await until_the_end(client.stream("streamed"))

    assert task.status.state is TaskState.COMPLETED
    assert texts(task) == texts(fetched) == ["hello"]
    assert fetched.history is not None and len(fetched.history) == 1
    assert isinstance(events[0], Task)
    assert any(isinstance(event, TaskArtifactUpdateEvent) for event in events)
    assert isinstance(events[-1], TaskStatusUpdateEvent)
    assert events[-1].status.state is TaskState.COMPLETED


@VERSIONS
async def test_send_without_blocking_then_cancel(url: str, version: str) -> None:
    async with Client(url, transport="GRPC", version=version) as client:
        started = await client.send("wait for it", blocking=False)
        assert isinstance(started, Task)
        canceled = await client.cancel_task(started.id)
        fetched = await client.get_task(started.id)
    assert canceled.status.state is TaskState.CANCELED
    assert fetched.status.state is TaskState.CANCELED


@VERSIONS
async def test_resubscribe_follows_a_task_until_it_is_canceled(url: str, version: str) -> None:
    async with (
        Client(url, transport="GRPC", version=version) as client,
        client.stream("wait for it") as stream,
    ):
        task = await anext(stream)
        assert isinstance(task, Task)
        async with client.resubscribe(task.id) as following:
            snapshot = await anext(following)
            await client.cancel_task(task.id)
            rest = await until_the_end(following)

    assert isinstance(snapshot, Task)
    assert snapshot.id == task.id
    assert isinstance(rest[-1], TaskStatusUpdateEvent)
    assert rest[-1].status.state is TaskState.CANCELED


async def test_list_tasks_over_1_0(url: str) -> None:
    async with Client(url, transport="GRPC", version="1.0") as client:
        task = await client.send("listed")
        assert isinstance(task, Task)
        page = await client.list_tasks(context_id=task.context_id, include_artifacts=True)
    assert [t.id for t in page.tasks] == [task.id]
    assert texts(page.tasks[0]) == ["listed"]
    assert page.next_page_token == ""


async def test_list_tasks_needs_1_0(url: str) -> None:
    async with Client(url, transport="GRPC", version="0.3") as client:
        with pytest.raises(A2AClientError, match=r"needs A2A 1\.0"):
            await client.list_tasks()


@VERSIONS
async def test_push_configs_and_extended_card(url: str, version: str) -> None:
    async with Client(url, transport="GRPC", version=version) as client:
        task = await client.send("hook me")
        assert isinstance(task, Task)
        saved = await client.set_push_config(task.id, HOOK)
        got = await client.get_push_config(task.id, "c-1")
        listed = await client.list_push_configs(task.id)
        await client.delete_push_config(task.id, "c-1")
        after = await client.list_push_configs(task.id)
        card = await client.get_extended_card()

    for found in (saved, got, listed[0]):
        assert found.task_id == task.id
        assert found.push_notification_config == HOOK
    assert len(listed) == 1
    assert after == []
    assert card.name == "Echo (extended)"


@VERSIONS
async def test_errors_are_typed(url: str, version: str) -> None:
    async with Client(url, transport="GRPC", version=version) as client:
        with pytest.raises(TaskNotFound, match="no-such-task"):
            await client.get_task("no-such-task")
        with pytest.raises(TaskNotFound):
            await until_the_end(client.resubscribe("no-such-task"))
        with pytest.raises(TaskNotFound):
            await client.get_push_config("no-such-task", "c-1")
        task = await client.send("done")
        assert isinstance(task, Task)
        with pytest.raises(TaskNotCancelable):
            await client.cancel_task(task.id)
        with pytest.raises(TaskNotFound):
            await client.get_push_config(task.id, "not-set")


async def test_invalid_params(url: str) -> None:
    async with Client(url, transport="GRPC", version="1.0") as client:
        with pytest.raises(InvalidParams, match="pageSize must be between 1 and 100"):
            await client.list_tasks(page_size=1000)


@VERSIONS
async def test_what_the_agent_does_not_offer(plain_url: str, version: str) -> None:
    async with Client(plain_url, transport="GRPC", version=version) as client:
        task = await client.send("hi")
        assert isinstance(task, Task)
        with pytest.raises(PushNotificationNotSupported):
            await client.set_push_config(task.id, HOOK)
        with pytest.raises(ExtendedAgentCardNotConfigured):
            await client.get_extended_card()


async def test_a_grpc_stream_cannot_resume_from_an_event_id(url: str) -> None:
    async with Client(url, transport="GRPC") as client:
        with pytest.raises(A2AClientError, match="cannot be resumed"):
            await until_the_end(client.resubscribe("any", last_event_id=3))


async def test_an_unreachable_server_is_a_client_error(url: str) -> None:
    async with Client(url, transport="GRPC") as client:
        card = await client.get_card()
    interfaces = card.supported_interfaces or []
    moved = [i.model_copy(update={"url": "127.0.0.1:1"}) for i in interfaces]
    unreachable = card.model_copy(update={"supported_interfaces": moved})
    async with Client(url, card=unreachable, transport="GRPC", timeout=5) as client:
        with pytest.raises(A2AClientError, match=r"cannot connect to 127\.0\.0\.1:1"):
            await client.send("anyone there?")


def test_the_blocking_client_over_grpc(url: str) -> None:
    with SyncClient(url, transport="GRPC", version="1.0") as client:
        reply = client.send("hello")
        events = list(client.stream("streamed"))
    assert isinstance(reply, Task | Message)
    assert isinstance(events[-1], TaskStatusUpdateEvent)
    assert events[-1].status.state is TaskState.COMPLETED


@pytest.mark.parametrize(
    ("address", "target"),
    [
        ("127.0.0.1:50051", ("127.0.0.1:50051", False)),
        ("[::1]:50051", ("[::1]:50051", False)),
        ("http://agent.example:50051/", ("agent.example:50051", False)),
        ("https://agent.example:443", ("agent.example:443", True)),
        ("grpcs://agent.example:443", ("agent.example:443", True)),
    ],
)
def test_channel_targets(address: str, target: tuple[str, bool]) -> None:
    assert channel_target(address) == target
