"""The client over every (binding, version) an accord server offers; choosing the interface."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pydantic_core
import pytest
from typer.testing import CliRunner

import accord
from accord import A2AClientError, Client
from accord.cli.main import app as cli
from accord.client.interfaces import card_interfaces, select_interface
from accord.client.transports import TRANSPORTS, open_transport
from accord.client.transports.base import json_body
from accord.errors import TaskNotCancelable, TaskNotFound, UnsupportedOperation
from accord.samples import echo
from accord.types import (
    AgentCard,
    AgentInterface,
    Message,
    MessageSendParams,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from agents_for_tests import GatedStreamer
from live_server import serve_app

INTERFACES = [("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0"), ("HTTP+JSON", "0.3")]
EACH = pytest.mark.parametrize(("binding", "version"), INTERFACES, ids=lambda v: v)
SPOKEN = frozenset(TRANSPORTS)


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    extended = echo.agent.card("").model_copy(update={"name": "Echo (extended)"})
    agent = accord.Agent(
        echo.agent.executor, name="Echo", push_notifications=True, extended_card=extended
    )
    with serve_app(agent.app()) as url:
        yield url


@pytest.fixture
async def logged() -> AsyncIterator[tuple[httpx.AsyncClient, list[httpx.Request]]]:
    requests: list[httpx.Request] = []

    async def record(request: httpx.Request) -> None:
        requests.append(request)

    async with httpx.AsyncClient(event_hooks={"request": [record]}) as http:
        yield http, requests


def texts(task: Task) -> list[str]:
    return [p.text for a in task.artifacts or () for p in a.parts if isinstance(p, TextPart)]


# --- every operation over every interface the server lists ----------------------------------


async def test_the_server_lists_every_interface_the_client_speaks(echo_url: str) -> None:
    async with Client(echo_url) as client:
        card = await client.get_card()
    listed = [(i.transport, i.protocol_version) for i in card_interfaces(card)]
    assert sorted(listed) == sorted(INTERFACES)


@EACH
async def test_send_get_and_stream(
    echo_url: str,
    binding: str,
    version: str,
    logged: tuple[httpx.AsyncClient, list[httpx.Request]],
) -> None:
    http, requests = logged
    async with Client(echo_url, http_client=http, transport=binding, version=version) as client:
        task = await client.send("hello")
        assert isinstance(task, Task)
        fetched = await client.get_task(task.id, history_length=1)
        events = [event async for event in client.stream("streamed")]
        interface = client.interface

    assert interface is not None
    assert (interface.transport, interface.protocol_version) == (binding, version)
    assert task.status.state is TaskState.COMPLETED
    assert texts(task) == texts(fetched) != []
    assert fetched.history is not None and len(fetched.history) == 1
    assert isinstance(events[0], Task)
    assert isinstance(events[-1], TaskStatusUpdateEvent)
    assert events[-1].status.state is TaskState.COMPLETED
    assert events[-1].final
    assert any(isinstance(event, TaskArtifactUpdateEvent) for event in events)
    sent = {
        r.headers.get("A2A-Version")
        for r in requests
        if r.url.path != "/.well-known/agent-card.json"
    }
    assert sent == ({"1.0"} if version == "1.0" else {None})


@EACH
async def test_typed_errors(echo_url: str, binding: str, version: str) -> None:
    async with Client(echo_url, transport=binding, version=version) as client:
        with pytest.raises(TaskNotFound):
            await client.get_task("no-such-task")
        task = await client.send("done")
        assert isinstance(task, Task)
        with pytest.raises(TaskNotCancelable):
            await client.cancel_task(task.id)
        with pytest.raises(TaskNotFound):
            async for _ in client.resubscribe("no-such-task"):
                pass


@pytest.mark.parametrize(
    ("version", "form"), [("1.0", "application/json"), ("0.3", "text/event-stream")]
)
async def test_a_json_rpc_stream_refused_before_it_starts_raises_the_typed_error(
    echo_url: str, version: str, form: str
) -> None:
    """1.0 answers the refusal as a plain JSON-RPC error, 0.3 as the stream's one event: the
    client raises the same typed error from either."""
    forms: list[str] = []

    async def record(response: httpx.Response) -> None:
        if response.request.url.path != "/.well-known/agent-card.json":
            forms.append(response.headers["content-type"].partition(";")[0])

    async with (
        httpx.AsyncClient(event_hooks={"response": [record]}) as http,
        Client(echo_url, http_client=http, transport="JSONRPC", version=version) as client,
    ):
        task = await client.send("done")
        assert isinstance(task, Task)
        forms.clear()
        with pytest.raises(TaskNotFound):
            async for _ in client.resubscribe("no-such-task"):
                pass
        with pytest.raises(UnsupportedOperation):
            async for _ in client.resubscribe(task.id):
                pass
        with pytest.raises(UnsupportedOperation):
            async for _ in client.stream("more", task_id=task.id):
                pass
    assert forms == [form] * 3


@EACH
async def test_push_configs_and_extended_card(echo_url: str, binding: str, version: str) -> None:
    async with Client(echo_url, transport=binding, version=version) as client:
        task = await client.send("hook me")
        assert isinstance(task, Task)
        config = PushNotificationConfig(url="https://hooks.example/a", id="c-1", token="t")
        saved = await client.set_push_config(task.id, config)
        got = await client.get_push_config(task.id, "c-1")
        listed = await client.list_push_configs(task.id)
        await client.delete_push_config(task.id, "c-1")
        after = await client.list_push_configs(task.id)
        card = await client.get_extended_card()

    for found in (saved, got, listed[0]):
        assert found.task_id == task.id
        assert found.push_notification_config.url == "https://hooks.example/a"
        assert found.push_notification_config.id == "c-1"
    assert len(listed) == 1
    assert after == []
    assert card.name == "Echo (extended)"


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_list_tasks_over_1_0(echo_url: str, binding: str) -> None:
    async with Client(echo_url, transport=binding, version="1.0") as client:
        task = await client.send("listed")
        assert isinstance(task, Task)
        page = await client.list_tasks(context_id=task.context_id, include_artifacts=True)
    assert [t.id for t in page.tasks] == [task.id]
    assert texts(page.tasks[0]) == texts(task)
    assert page.next_page_token == ""


async def test_list_tasks_needs_1_0(echo_url: str) -> None:
    async with Client(echo_url, version="0.3") as client:
        with pytest.raises(A2AClientError, match=r"needs A2A 1\.0"):
            await client.list_tasks()


@EACH
async def test_a_stream_resumes_after_its_last_event_id(binding: str, version: str) -> None:
    executor = GatedStreamer(chunks=2)
    with serve_app(accord.Agent(executor, name="Gated").app()) as url:
        async with Client(url, transport=binding, version=version) as client:
            async with client.stream("go") as events:
                task = await anext(events)
                await anext(events)  # working
                broke_off_at = events.last_event_id
            executor.release_all()
            await executor.finished.wait()
            resumed = [e async for e in client.resubscribe(task.id, last_event_id=broke_off_at)]

    assert isinstance(task, Task)
    assert broke_off_at is not None
    assert [type(event) for event in resumed] == [
        TaskArtifactUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]


# --- choosing the interface -------------------------------------------------------------------


def card_with(interfaces: list[AgentInterface] | None, **legacy: object) -> AgentCard:
    return echo.agent.card("http://agent.example/").model_copy(
        update={"supported_interfaces": interfaces, **legacy}
    )


def interface(binding: str, version: str | None, path: str = "") -> AgentInterface:
    url = f"http://agent.example/{path}"
    return AgentInterface(url=url, transport=binding, protocol_version=version)


LISTED = [
    interface("GRPC", "1.0", "grpc"),
    interface("HTTP+JSON", "1.0", "rest"),
    interface("JSONRPC", "1.0", "rpc"),
    interface("JSONRPC", "0.3", "rpc03"),
    interface("HTTP+JSON", "0.3", "v1"),
]


def test_the_first_interface_the_client_speaks_wins() -> None:
    assert select_interface(card_with(LISTED), SPOKEN) == LISTED[0]


@pytest.mark.parametrize(
    ("transport", "version", "chosen"),
    [
        ("JSONRPC", None, 2),
        ("jsonrpc", "0.3", 3),
        (None, "0.3", 3),
        ("HTTP+JSON", "0.3", 4),
        (None, "0.2.5", 3),
        (None, "1.0.1", 0),
        ("http+json", "1.0.1", 1),
    ],
)
def test_the_callers_transport_and_version_filter_the_card_order(
    transport: str | None, version: str | None, chosen: int
) -> None:
    card = card_with(LISTED)
    assert select_interface(card, SPOKEN, transport=transport, version=version) == LISTED[chosen]


def test_interfaces_of_unknown_versions_are_skipped() -> None:
    card = card_with([interface("JSONRPC", "2.0", "next"), interface("JSONRPC", "0.3", "rpc")])
    assert select_interface(card, SPOKEN).url == "http://agent.example/rpc"


def test_a_card_without_supported_interfaces_is_read_as_0_3() -> None:
    card = card_with(
        None,
        url="http://agent.example/rest",
        preferred_transport="HTTP+JSON",
        protocol_version="0.2.5",
        additional_interfaces=[AgentInterface(url="http://agent.example/rpc", transport="JSONRPC")],
    )
    assert select_interface(card, SPOKEN).url == "http://agent.example/rest"
    chosen = select_interface(card, SPOKEN, transport="JSONRPC")
    assert (chosen.url, chosen.protocol_version) == ("http://agent.example/rpc", "0.2.5")


@pytest.mark.parametrize(
    ("transport", "version", "message"),
    [
        ("GRPC", "0.3", "offers no GRPC 0.3 .*it offers: GRPC 1.0"),
        ("HTTP+JSON", "0.3", "offers no HTTP\\+JSON 0.3 .*it offers: GRPC 1.0"),
        (None, "7.0", "does not speak A2A version '7.0'"),
    ],
)
def test_no_matching_interface_is_a_clear_error(
    transport: str | None, version: str | None, message: str
) -> None:
    card = card_with(LISTED[:3])
    with pytest.raises(A2AClientError, match=message):
        select_interface(card, SPOKEN, transport=transport, version=version)


# --- the command line -------------------------------------------------------------------------


def test_accord_card_lists_every_interface(echo_url: str) -> None:
    result = CliRunner().invoke(cli, ["card", echo_url])
    assert result.exit_code == 0, result.output
    for binding, version in INTERFACES:
        assert f"{binding} {version} at {echo_url}" in result.output


@EACH
def test_accord_send_uses_the_interface_asked_for(
    echo_url: str, binding: str, version: str
) -> None:
    args = ["send", echo_url, "hi", "--transport", binding, "--version", version, "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert '"state":"completed"' in result.output.replace(" ", "")


def test_accord_send_refuses_an_interface_the_card_does_not_offer(echo_url: str) -> None:
    result = CliRunner().invoke(cli, ["send", echo_url, "hi", "--transport", "GRPC"])
    assert result.exit_code != 0
    assert "offers no GRPC" in result.output


@pytest.mark.parametrize(
    "metadata",
    [None, {"n": None, "deep": {"x": None, "f": 1.5}, "é": "ü", "inf": float("inf")},
     {"bad": b"\xff"}],
)  # fmt: skip
def test_a_json_rpc_request_is_written_as_its_dict_would_be(metadata: Any) -> None:
    interface = AgentInterface(
        url="http://agent.test/", transport="JSONRPC", protocol_version="0.3"
    )
    transport: Any = open_transport(httpx.AsyncClient(), interface, {})
    message = Message(message_id="m1", role=Role.USER, parts=[TextPart(text="hé")])
    params = MessageSendParams(message=message, metadata=metadata)
    call = transport.codec.send
    try:
        request = {"jsonrpc": "2.0", "id": 3, "method": call.name, "params": call.encode(params)}
        expected = pydantic_core.to_json(request, exclude_none=True)
    except ValueError as exc:  # what cannot be written raises as before
        with pytest.raises(type(exc)):
            transport._request(3, call, params)
        return
    assert transport._request(3, call, params) == expected


@pytest.mark.parametrize(
    "body",
    [b'{"a":[1,2.5,null,true]}', b'{"a":"\\ud800"}', b"\xef\xbb\xbf{}", '{"a":1}'.encode("utf-16"),
     b'{"a":NaN,"b":1e400,"c":123456789012345678901234567890}', b'{"a":1,"a":2}',
     b'{"a":"x\x01y"}', b'{"a":"\xff"}', b"[1,2,]", b"", b"not json", b"[" * 300 + b"]" * 300],
)  # fmt: skip
def test_a_body_reads_as_the_json_module_reads_it(body: bytes) -> None:
    try:
        expected = json.loads(body)
    except ValueError:
        expected = None
    assert repr(json_body(body)) == repr(expected)
