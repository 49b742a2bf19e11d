"""accord's client against the official a2a-sdk server: 1.0 and 0.3, JSON-RPC, HTTP+JSON, gRPC."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

import grpc
import httpx
import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.helpers import get_message_text, new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    a2a_pb2_grpc,
)
from starlette.applications import Starlette

from accord import A2AClientError, Client
from accord.client.messages import user_message
from accord.errors import TaskNotFound, VersionNotSupported
from accord.types import (
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationConfig,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    new_id,
)
from agents_for_tests import SAFETY_TIMEOUT, Gate
from live_server import serve_app
from webhooks import NotificationHook, receiving


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
            await self.hold(text)
        await updater.add_artifact(parts=[Part(text=text)])
        await updater.complete()

    async def hold(self, text: str) -> None:
        """Work on a `hold ...` task until `release` opens."""
        self.holding.open()
        await self.release.wait(timeout=None)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        assert task is not None
        updater = TaskUpdater(event_queue=event_queue, task_id=task.id, context_id=task.context_id)
        await updater.cancel()


@dataclass
class OfficialServer:
    """The official SDK serving one executor over every binding it has: the card, JSON-RPC at
    `/` and HTTP+JSON (1.0 and 0.3) at `url`, gRPC (`lf.a2a.v1` and `a2a.v1`) at `grpc_target`.

    Push notifications are on (the SDK's in-memory config store and its sender). The card
    routes serialize `card` on every request, so tests add the interfaces it lists.
    """

    url: str
    grpc_target: str
    card: AgentCard

    def list_interface(self, binding: str, version: str) -> None:
        url = self.grpc_target if binding == "GRPC" else self.url
        interface = AgentInterface(protocol_binding=binding, protocol_version=version, url=url)
        self.card.supported_interfaces.append(interface)


@contextmanager
def official_server(executor: AgentExecutor) -> Iterator[OfficialServer]:
    card = AgentCard(
        name="Official echo",
        description="The official SDK serving an echo executor.",
        version="1.0.0",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes.", tags=["echo"])],
    )
    configs = InMemoryPushNotificationConfigStore()
    webhooks = httpx.AsyncClient(timeout=SAFETY_TIMEOUT)
    handler = DefaultRequestHandler(
        agent_executor=executor,
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=configs,
        push_sender=BasePushNotificationSender(webhooks, configs),
    )
    routes = create_agent_card_routes(card)
    routes.extend(create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True))
    routes.extend(create_rest_routes(handler, enable_v0_3_compat=True))
    grpc_ports: list[int] = []

    @asynccontextmanager
    async def serving_grpc_too(app: Starlette) -> AsyncIterator[None]:
        # On uvicorn's event loop, the one the handler's tasks run on.
        server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
        a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler), server)
        grpc_ports.append(server.add_insecure_port("127.0.0.1:0"))
        await server.start()
        try:
            yield
        finally:
            await server.stop(grace=None)
            await handler.aclose()
            await webhooks.aclose()

    with serve_app(Starlette(routes=routes, lifespan=serving_grpc_too)) as url:
        yield OfficialServer(url, f"127.0.0.1:{grpc_ports[0]}", card)


INTERFACES = [
    ("JSONRPC", "0.3"),
    ("JSONRPC", "1.0"),
    ("HTTP+JSON", "1.0"),
    ("HTTP+JSON", "0.3"),
    ("GRPC", "1.0"),
    ("GRPC", "0.3"),
]
V1_0 = [i for i in INTERFACES if i[1] == "1.0"]
V0_3 = [i for i in INTERFACES if i[1] == "0.3"]


def interface_id(interface: tuple[str, str]) -> str:
    return "-".join(interface)


@pytest.fixture
def official_echo() -> OfficialEcho:
    return OfficialEcho()


SEEDING = ("JSONRPC", "1.0")
"""The interface tests use to set up what the one under test then reads."""


@pytest.fixture(params=INTERFACES, ids=interface_id)
def official_url(request: pytest.FixtureRequest, official_echo: OfficialEcho) -> Iterator[str]:
    """The official server's URL; its card lists the interface under test (the param) first,
    so that is the one accord's client picks, then SEEDING."""
    with official_server(official_echo) as server:
        server.list_interface(*request.param)
        server.list_interface(*SEEDING)
        yield server.url


def seeding(url: str) -> Client:
    return Client(url, transport=SEEDING[0], version=SEEDING[1])


def on(
    interfaces: list[tuple[str, str]],
    xfail: dict[tuple[str, str], pytest.MarkDecorator] | None = None,
) -> pytest.MarkDecorator:
    """Run a test against the official server on `interfaces` only, marked on some (`xfail`)."""
    marks = xfail or {}
    params = [pytest.param(i, marks=[marks[i]] if i in marks else []) for i in interfaces]
    return pytest.mark.parametrize("official_url", params, ids=interface_id, indirect=True)


NO_DELETE_RESULT = pytest.mark.xfail(
    strict=True,
    raises=A2AClientError,
    reason="a2a-sdk 1.3.0 JSON-RPC 0.3 answers tasks/pushNotificationConfig/delete without a "
    "`result` member; JSON-RPC 2.0 and spec 0.3 (7.8; DeleteTaskPushNotificationConfig"
    "SuccessResponse in a2a-v0.3.0.json requires `result`: null) require one",
)
NO_DELETE_ROUTE = pytest.mark.xfail(
    strict=True,
    raises=VersionNotSupported,
    reason="a2a-sdk 1.3.0 HTTP+JSON 0.3 (compat/v0_3/rest_adapter.py) has no DELETE "
    "/v1/tasks/{id}/pushNotificationConfigs/{configId} route (spec 0.3, 3.5.6 and 7.8): the "
    "request falls to the 1.0 route with tenant `v1` and fails with VersionNotSupported",
)


PAYLOAD_IS_1_0 = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="a2a-sdk 1.3.0 (BasePushNotificationSender) posts a 1.0 StreamResponse to every "
    "webhook, also to one set over a 0.3 interface, whose notifications spec 0.3 (9.5, step 3) "
    "says are the Task object itself",
)


# --- the operations every binding has --------------------------------------------------------


async def test_card_resolution(official_url: str) -> None:
    async with Client(official_url) as client:
        card = await client.get_card()
        await client.transport()
    listed = card.supported_interfaces[0]
    assert card.name == "Official echo"
    assert card.capabilities.streaming and card.capabilities.push_notifications
    assert client.interface == listed


@pytest.mark.parametrize(
    ("asked", "chosen"),
    [
        ({}, ("GRPC", "0.3")),
        ({"version": "1.0"}, ("GRPC", "1.0")),
        ({"transport": "JSONRPC"}, ("JSONRPC", "1.0")),
        ({"transport": "http+json", "version": "0.3"}, ("HTTP+JSON", "0.3")),
    ],
)
async def test_the_card_order_and_what_is_asked_choose_the_interface(
    official_echo: OfficialEcho, asked: dict[str, str], chosen: tuple[str, str]
) -> None:
    with official_server(official_echo) as server:
        for interface in [("GRPC", "0.3"), ("GRPC", "1.0"), ("JSONRPC", "1.0"), *V0_3[::-1]]:
            server.list_interface(*interface)
        async with Client(server.url, **asked) as client:
            task = await client.send("hello")
            interface = client.interface
    assert interface is not None
    assert (interface.transport, interface.protocol_version) == chosen
    assert isinstance(task, Task) and task.status.state == TaskState.COMPLETED


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
        async with asyncio.timeout(SAFETY_TIMEOUT):
            events = [event async for event in client.stream("hello")]
    assert isinstance(events[0], Task)
    assert events[-1].status.state == TaskState.COMPLETED  # type: ignore[union-attr]


async def test_unknown_task_is_task_not_found(official_url: str) -> None:
    async with Client(official_url) as client:
        with pytest.raises(TaskNotFound):
            await client.get_task("no-such-task")
        with pytest.raises(TaskNotFound):
            await client.cancel_task("no-such-task")


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


# --- push notification configs ---------------------------------------------------------------


@on(INTERFACES)
async def test_a_push_config_is_created(official_url: str) -> None:
    hook = PushNotificationConfig(url="https://hooks.example/a", id="c-1", token="secret")
    async with Client(official_url) as client, seeding(official_url) as seeder:
        task = await client.send("hello")
        assert isinstance(task, Task)
        created = await client.set_push_config(task.id, hook)
        stored = await seeder.get_push_config(task.id, "c-1")
    assert created == TaskPushNotificationConfig(task_id=task.id, push_notification_config=hook)
    assert stored == created


@on(INTERFACES)
async def test_a_push_config_without_an_id_gets_one(official_url: str) -> None:
    async with Client(official_url) as client:
        task = await client.send("hello")
        assert isinstance(task, Task)
        hook = PushNotificationConfig(url="https://hooks.example/a")
        created = await client.set_push_config(task.id, hook)
        config_id = created.push_notification_config.id
        assert config_id
        fetched = await client.get_push_config(task.id, config_id)
    assert fetched == created
    assert created.push_notification_config.url == hook.url


async def seeded_task(url: str, *configs: PushNotificationConfig) -> Task:
    """A completed task with `configs`, made over SEEDING."""
    async with seeding(url) as seeder:
        task = await seeder.send("hello")
        assert isinstance(task, Task)
        for config in configs:
            await seeder.set_push_config(task.id, config)
    return task


FIRST = PushNotificationConfig(url="https://hooks.example/a", id="c-1", token="secret")
SECOND = PushNotificationConfig(url="https://hooks.example/b", id="c-2")


async def test_push_configs_are_read_and_listed(official_url: str) -> None:
    task = await seeded_task(official_url, FIRST, SECOND)
    async with Client(official_url) as client:
        fetched = await client.get_push_config(task.id, "c-2")
        listed = await client.list_push_configs(task.id)
    assert fetched == TaskPushNotificationConfig(task_id=task.id, push_notification_config=SECOND)
    assert sorted(listed, key=lambda c: c.push_notification_config.url) == [
        TaskPushNotificationConfig(task_id=task.id, push_notification_config=config)
        for config in (FIRST, SECOND)
    ]


@on(
    INTERFACES,
    xfail={("JSONRPC", "0.3"): NO_DELETE_RESULT, ("HTTP+JSON", "0.3"): NO_DELETE_ROUTE},
)
async def test_a_push_config_is_deleted(official_url: str) -> None:
    task = await seeded_task(official_url, FIRST, SECOND)
    async with Client(official_url) as client:
        await client.delete_push_config(task.id, "c-1")
        left = await client.list_push_configs(task.id)
    assert [c.push_notification_config for c in left] == [SECOND]


async def test_push_configs_of_an_unknown_task_are_task_not_found(official_url: str) -> None:
    async with Client(official_url) as client:
        with pytest.raises(TaskNotFound):
            await client.list_push_configs("no-such-task")
        with pytest.raises(TaskNotFound):
            await client.get_push_config("no-such-task", "c-1")


@on(
    INTERFACES,
    xfail={
        ("JSONRPC", "0.3"): PAYLOAD_IS_1_0,
        ("HTTP+JSON", "0.3"): PAYLOAD_IS_1_0,
        ("GRPC", "0.3"): PAYLOAD_IS_1_0,
    },
)
async def test_the_official_server_notifies_a_webhook_set_by_accord(
    official_url: str, official_echo: OfficialEcho
) -> None:
    hook = NotificationHook()
    with receiving(hook) as hook_url:
        async with Client(official_url) as client:
            task = await client.send("hold on", blocking=False)
            assert isinstance(task, Task)
            await official_echo.holding.wait()
            config = PushNotificationConfig(url=hook_url, id="hook", token="secret")
            await client.set_push_config(task.id, config)
            official_echo.release.open()
            await hook.reached(TaskState.COMPLETED).wait()
            version = client.interface.protocol_version if client.interface else None
    headers, _ = hook.calls[-1]
    assert headers["x-a2a-notification-token"] == "secret"
    assert hook.versions() == {version}


@on(INTERFACES, xfail={interface: PAYLOAD_IS_1_0 for interface in V0_3})
async def test_a_push_config_sent_with_the_message_is_used(official_url: str) -> None:
    hook = NotificationHook()
    with receiving(hook) as hook_url:
        async with Client(official_url) as client:
            transport = await client.transport()
            config = PushNotificationConfig(url=hook_url, token="secret")
            params = MessageSendParams(
                message=user_message("hello"),
                configuration=MessageSendConfiguration(push_notification_config=config),
            )
            task = await transport.call(transport.codec.send, params)
            await hook.reached(TaskState.COMPLETED).wait()
    assert isinstance(task, Task)
    assert all(headers["x-a2a-notification-token"] == "secret" for headers, _ in hook.calls)
    assert hook.versions() == {transport.codec.version.value}


# --- listing tasks (A2A 1.0) -----------------------------------------------------------------


@on(V1_0)
async def test_list_tasks_filters_and_pages(official_url: str, official_echo: OfficialEcho) -> None:
    context = new_id()
    async with Client(official_url) as client:
        done = [await client.send(f"task {i}", context_id=context) for i in range(3)]
        held = await client.send("hold it", context_id=context, blocking=False)
        try:
            await official_echo.holding.wait()
            await client.send("elsewhere")
            listed = await client.list_tasks(context_id=context)
            completed = await client.list_tasks(context_id=context, state=TaskState.COMPLETED)
            working = await client.list_tasks(context_id=context, state=TaskState.WORKING)
            with_artifacts = await client.list_tasks(
                context_id=context, state=TaskState.COMPLETED, include_artifacts=True
            )
            no_history = await client.list_tasks(context_id=context, history_length=0)
            pages = [await client.list_tasks(context_id=context, page_size=3)]
            while pages[-1].next_page_token and len(pages) < 5:
                token = pages[-1].next_page_token
                pages.append(
                    await client.list_tasks(context_id=context, page_size=3, page_token=token)
                )
        finally:
            official_echo.release.open()
    ids = {t.id for t in done if isinstance(t, Task)}
    assert isinstance(held, Task) and len(ids) == 3
    assert {t.id for t in listed.tasks} == ids | {held.id}
    assert all(t.history for t in listed.tasks)
    assert not any(t.artifacts for t in listed.tasks)
    assert {t.id for t in completed.tasks} == ids
    assert [t.id for t in working.tasks] == [held.id]
    assert sorted(t.artifacts[0].text for t in with_artifacts.tasks) == [
        "task 0",
        "task 1",
        "task 2",
    ]
    assert not any(t.history for t in no_history.tasks)
    assert [len(page.tasks) for page in pages] == [3, 1]
    assert {t.id for page in pages for t in page.tasks} == ids | {held.id}
    assert (pages[0].page_size, pages[0].total_size) == (3, 4)


@on(V0_3)
async def test_listing_tasks_needs_1_0(official_url: str) -> None:
    async with Client(official_url) as client:
        with pytest.raises(A2AClientError, match=r"listing tasks needs A2A 1\.0"):
            await client.list_tasks()
