"""accord's gateway in front of the official a2a-sdk's agents: every version and binding of
accord's client through it, to an upstream speaking only 0.3 JSON-RPC or only 1.0 HTTP+JSON;
ids, states and artifacts as the upstream sent them, its errors as its own, cancel relayed,
an upstream gone mid-stream, auth refused at the gateway."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import httpx
import pytest
from a2a.helpers import get_artifact_text
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.types import AgentExtension as SdkExtension
from a2a.types import TaskState as SdkTaskState
from typer.testing import CliRunner

import accord
from accord import AgentExecutor, Client
from accord.agents import EventSink
from accord.auth import ApiKey, Security
from accord.cli.main import app
from accord.client import ApiKey as ApiKeyCredential
from accord.client import Credentials, activated_extensions
from accord.client.messages import send_params, user_message
from accord.errors import InternalError, TaskNotFound, Unauthenticated, UnsupportedOperation
from accord.extensions import Extension
from accord.gateway.routing import routed
from accord.gateway.upstream import blocking_send
from accord.samples import currency
from accord.types import (
    Artifact,
    DataPart,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
    new_id,
)
from live_server import serve_app
from test_interop_fasta2a import fasta2a_url  # noqa: F401  (a fixture)
from test_interop_official_client import kind, official_client
from test_interop_official_client import request as sdk_request
from test_interop_official_server import OfficialEcho, OfficialServer, official_server
from webhooks import LOOPBACK, NotificationHook, receiving

EVERY_CLIENT = [
    ("JSONRPC", "1.0"),
    ("HTTP+JSON", "1.0"),
    ("GRPC", "1.0"),
    ("JSONRPC", "0.3"),
    ("HTTP+JSON", "0.3"),
    ("GRPC", "0.3"),
    ("JSONRPC", "0.1"),  # its client chooses the task's id: the upstream's is the task's
]
UPSTREAMS = [("JSONRPC", "0.3"), ("HTTP+JSON", "1.0")]
LOCAL = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}"
"""A time as FastA2A writes it: local, without an offset."""


def named(interface: tuple[str, str]) -> str:
    return "-".join(interface)


@pytest.fixture
def echo() -> OfficialEcho:
    return OfficialEcho()


@pytest.fixture(params=UPSTREAMS, ids=named)
def upstream(request: pytest.FixtureRequest, echo: OfficialEcho) -> Iterator[OfficialServer]:
    """The official SDK's server, its card listing one interface only (the param)."""
    with official_server(echo) as server:
        server.list_interface(*request.param)
        yield server


@pytest.fixture
def gateway_url(upstream: OfficialServer) -> Iterator[str]:
    agent = accord.gateway(upstream.url)
    with serve_app(agent.app(config=accord.ServerConfig(grpc_port=0))) as url:
        yield url


def user(text: str, **ids: str) -> Message:
    return Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text=text)], **ids)


@pytest.mark.parametrize("caller", EVERY_CLIENT, ids=named)
async def test_every_client_gets_the_upstreams_task(
    gateway_url: str, upstream: OfficialServer, caller: tuple[str, str]
) -> None:
    async with Client(gateway_url, transport=caller[0], version=caller[1]) as client:
        task = await client.send(user("hello"))
    assert isinstance(task, Task), task
    assert task.status.state is TaskState.COMPLETED
    assert [a.text for a in task.artifacts or ()] == ["hello"]
    async with Client(upstream.url) as direct:
        theirs = await direct.get_task(task.id)
    assert (theirs.id, theirs.context_id) == (task.id, task.context_id)
    assert theirs.status.state is TaskState.COMPLETED


@pytest.mark.parametrize("caller", EVERY_CLIENT, ids=named)
async def test_every_client_streams_what_the_upstream_sent(
    gateway_url: str, caller: tuple[str, str]
) -> None:
    message = user("streamed")
    async with Client(gateway_url, transport=caller[0], version=caller[1]) as client:
        async with client.stream(message) as stream:
            events = [event async for event in stream]
        first, *rest = events
        # 0.1 streams carry no Task: its first status update stands for it.
        assert isinstance(first, Task | TaskStatusUpdateEvent)
        task_id = first.id if isinstance(first, Task) else first.task_id
        stored = await client.get_task(task_id)
    kinds = [type(event).__name__ for event in events]
    states = [e.status.state for e in rest if isinstance(e, TaskStatusUpdateEvent)]
    artifacts = [e.artifact.text for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert first.status.state is TaskState.SUBMITTED, kinds
    assert isinstance(first, Task) or caller[1] == "0.1", kinds
    assert states == [TaskState.WORKING, TaskState.COMPLETED], kinds
    assert artifacts == ["streamed"]
    assert stored.status.state is TaskState.COMPLETED
    assert stored.history is not None and stored.history[0].text == "streamed"
    if caller[1] != "0.1":  # 0.1 messages have no id: the server gives them one
        assert stored.history[0].message_id == message.message_id


async def test_a_reply_comes_back_as_a_message(gateway_url: str) -> None:
    async with Client(gateway_url, version="1.0") as client:
        reply = await client.send(user("reply please"))
    assert isinstance(reply, Message) and reply.text == "reply please"


async def test_upstream_errors_reach_the_caller_as_they_are(gateway_url: str) -> None:
    async with Client(gateway_url, transport="HTTP+JSON", version="1.0") as client:
        with pytest.raises(TaskNotFound):
            await client.send(user("hello", task_id="no-such-task"))


async def test_cancel_is_relayed(
    gateway_url: str, upstream: OfficialServer, echo: OfficialEcho
) -> None:
    client = Client(gateway_url, transport="GRPC", version="1.0")
    async with client, client.stream(user("hold on")) as stream:
        task = await anext(stream)
        await echo.holding.wait()
        canceled = await client.cancel_task(task.id)
        rest = [event async for event in stream]
    assert canceled.status.state is TaskState.CANCELED
    assert all(not isinstance(e, TaskArtifactUpdateEvent) for e in rest)
    async with Client(upstream.url) as direct:
        theirs = await direct.get_task(task.id)
    assert theirs.status.state is TaskState.CANCELED


class CountingEcho(OfficialEcho):
    """The official echo, counting the messages that reach it."""

    def __init__(self) -> None:
        super().__init__()
        self.executed = 0

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.executed += 1
        await super().execute(context, event_queue)


async def test_auth_is_refused_at_the_gateway_without_reaching_the_upstream() -> None:
    echo = CountingEcho()
    security = Security(ApiKey(keys={"secret": "team-a"}))
    with official_server(echo) as upstream:
        upstream.list_interface("JSONRPC", "0.3")
        agent = accord.gateway(upstream.url, security=security)
        with serve_app(agent.app(config=accord.ServerConfig(grpc_port=0))) as url:
            for transport in ("JSONRPC", "HTTP+JSON", "GRPC"):
                async with Client(url, transport=transport, version="1.0") as client:
                    with pytest.raises(Unauthenticated):
                        await client.send(user("hello"))
            assert echo.executed == 0
            key = Credentials(ApiKeyCredential("secret"))
            async with Client(url, credentials=key, transport="GRPC", version="1.0") as client:
                task = await client.send(user("hello"))
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert echo.executed == 1


@pytest.mark.parametrize(
    "caller", [("GRPC", "1.0"), ("GRPC", "0.3"), ("JSONRPC", "0.3")], ids=named
)
async def test_a_fasta2a_agent_behind_the_gateway(
    fasta2a_url: str,  # noqa: F811  (the fixture imported above)
    caller: tuple[str, str],
) -> None:
    agent = accord.gateway(fasta2a_url)
    with serve_app(agent.app(config=accord.ServerConfig(grpc_port=0))) as url:
        async with Client(url, transport=caller[0], version=caller[1]) as client:
            sent = await client.send(user("hello"))
            async with client.stream(user("streamed")) as stream:
                events = [event async for event in stream]
    assert isinstance(sent, Task) and sent.status.state is TaskState.COMPLETED
    assert [a.text for a in sent.artifacts or ()] == ["hello"]
    async with Client(fasta2a_url) as direct:
        theirs = await direct.get_task(sent.id)
    assert theirs.context_id == sent.context_id
    artifacts = [e.artifact.text for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert artifacts == ["streamed"]
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED
    # FastA2A writes local times without an offset (to the microsecond; accord's own times are to
    # the millisecond, in UTC). The task it streamed first carries its time: ProtoJSON (gRPC)
    # reads it as UTC, a Timestamp naming its offset; 0.3's JSON carries it as it is.
    assert theirs.status.timestamp is not None and re.fullmatch(LOCAL, theirs.status.timestamp)
    first = events[0]
    assert isinstance(first, Task) and first.status.timestamp is not None
    relayed = LOCAL if caller[0] == "JSONRPC" else LOCAL + "Z"
    assert re.fullmatch(relayed, first.status.timestamp)


@pytest.mark.parametrize(
    "caller", [("GRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")], ids=named
)
async def test_the_official_client_through_the_gateway_to_a_0_3_agent(
    echo: OfficialEcho, caller: tuple[str, str]
) -> None:
    """The official SDK on both ends: its 0.3 JSON-RPC agent, untouched, answers its 1.0
    gRPC and HTTP+JSON clients through the gateway."""
    with official_server(echo) as upstream:
        upstream.list_interface("JSONRPC", "0.3")
        agent = accord.gateway(upstream.url)
        with serve_app(agent.app(config=accord.ServerConfig(grpc_port=0))) as url:
            async with official_client(url, caller) as client:
                events = [e async for e in client.send_message(sdk_request("hello"))]
    assert [kind(e) for e in events] == [
        "task",
        "status_update",
        "artifact_update",
        "status_update",
    ]
    task_id = events[0].task.id
    assert {e.status_update.task_id for e in events[1::2]} == {task_id}
    assert get_artifact_text(events[2].artifact_update.artifact) == "hello"
    assert events[3].status_update.status.state == SdkTaskState.TASK_STATE_COMPLETED


async def test_several_upstreams_each_at_its_prefix_health_checked(
    fasta2a_url: str,  # noqa: F811  (the fixture imported above)
) -> None:
    with official_server(OfficialEcho()) as official:
        official.list_interface("HTTP+JSON", "1.0")
        agents = {"official": accord.gateway(official.url), "fast": accord.gateway(fasta2a_url)}
        with serve_app(routed(agents)) as url:
            for prefix, binding in (("official", "JSONRPC"), ("fast", "HTTP+JSON")):
                async with Client(f"{url}/{prefix}", transport=binding, version="0.3") as client:
                    card = await client.get_card()
                    task = await client.send(user(f"hello {prefix}"))
                assert card.name == agents[prefix].name
                assert client.interface is not None
                assert client.interface.url.startswith(f"{url}/{prefix}")
                assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
                assert [a.text for a in task.artifacts or ()] == [f"hello {prefix}"]
            async with httpx.AsyncClient() as http:
                healthy = await http.get(f"{url}/health")
    assert healthy.status_code == 200, healthy.text
    assert healthy.json()["upstreams"]["official"] == {"url": official.url, "up": True}
    with serve_app(routed(agents)) as url:  # the official upstream is down now
        async with httpx.AsyncClient() as http:
            unhealthy = await http.get(f"{url}/health")
        async with Client(f"{url}/official", version="1.0") as client:
            with pytest.raises(InternalError, match="cannot be reached"):
                await client.send(user("anyone there?"))
    assert unhealthy.status_code == 503
    down = unhealthy.json()["upstreams"]
    assert down["official"]["up"] is False and "cannot be reached" in down["official"]["error"]
    assert down["fast"]["up"] is True


class Marker(Extension):
    uri = "https://example.com/extensions/marker/v1"
    description = "Marks what the agent saw."


class Reports(AgentExecutor):
    """Answers with what reached it: the extensions the request activated, the message's
    metadata and the request's."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        assert context.call is not None
        updater = accord.TaskUpdater(context, events)
        await updater.start_work()
        seen = {
            "extensions": [e.uri for e in context.call.extensions],
            "message": context.message.metadata,
            "request": context.metadata,
            "streamed": context.call.streaming,
        }
        await updater.add_artifact(DataPart(data=seen))
        await updater.complete()


@pytest.mark.parametrize("upstream_streams", [True, False], ids=["streaming", "not-streaming"])
async def test_extensions_and_metadata_pass_through(upstream_streams: bool) -> None:
    upstream = accord.Agent(
        Reports(), name="Reporter", extensions=[Marker()], streaming=upstream_streams
    )
    with serve_app(upstream.app()) as upstream_url:
        agent = accord.gateway(upstream_url)
        with serve_app(agent.app(config=accord.ServerConfig(grpc_port=0))) as url:
            headers = {"A2A-Extensions": Marker.uri}
            client = Client(url, transport="GRPC", version="1.0", headers=headers)
            async with client:
                card = await client.get_card()
                message = user("what did you see?").model_copy(update={"metadata": {"m": 1}})
                task = await client.send(message, metadata={"r": 2})
    assert [e.uri for e in card.capabilities.extensions or ()] == [Marker.uri]
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    [artifact] = task.artifacts or []
    [part] = artifact.parts
    assert isinstance(part, DataPart)
    assert part.data == {
        "extensions": [Marker.uri],
        "message": {"m": 1},
        "request": {"r": 2},
        "streamed": False,
    }


async def test_only_a_caller_waiting_for_the_outcome_is_relayed_with_a_blocking_send() -> None:
    """A blocking send goes on as one (cheaper for both, and sooner answered than a stream);
    a stream, and a send that does not wait, follow the upstream's task as it goes."""
    upstream = accord.Agent(Reports(), name="Reporter")
    with serve_app(upstream.app()) as upstream_url:
        agent = accord.gateway(upstream_url)
        with serve_app(agent.app()) as url:
            async with Client(url, version="1.0") as client:
                waited = await client.send(user("blocking"))
                async with client.stream(user("streamed")) as stream:
                    streamed = [event async for event in stream]
                started = await client.send(user("non-blocking"), blocking=False)
                assert isinstance(started, Task)
                with suppress(UnsupportedOperation):  # it may have ended already
                    async with client.resubscribe(started.id) as rest:
                        _ = [event async for event in rest]
                followed = await client.get_task(started.id)

    def upstream_streamed(artifacts: list[Artifact]) -> object:
        [part] = artifacts[0].parts
        assert isinstance(part, DataPart)
        return part.data["streamed"]

    assert isinstance(waited, Task) and upstream_streamed(waited.artifacts or []) is False
    [artifact] = [e.artifact for e in streamed if isinstance(e, TaskArtifactUpdateEvent)]
    assert upstream_streamed([artifact]) is True
    assert followed.status.state is TaskState.COMPLETED
    assert upstream_streamed(followed.artifacts or []) is True


CALLERS = [(t, v) for v in ("1.0", "0.3") for t in ("JSONRPC", "HTTP+JSON", "GRPC")]


async def activated_through(url: str, caller: tuple[str, str]) -> tuple[list[str], list[str]]:
    """The extensions the gateway at `url` says a send, and a stream, of `caller` activated
    when asked for Marker."""
    headers = {"A2A-Extensions": Marker.uri}
    async with Client(url, transport=caller[0], version=caller[1], headers=headers) as client:
        with activated_extensions() as sent:
            task = await client.send(user("send"))
        with activated_extensions() as streamed:
            async with client.stream(user("stream")) as stream:
                events = [event async for event in stream]
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED
    return sent, streamed


@contextmanager
def gateway_to_reporter(transport: str, version: str) -> Iterator[str]:
    """A gateway to an accord agent implementing Marker, called over `transport` and `version`."""
    upstream = accord.Agent(Reports(), name="Reporter", extensions=[Marker()])
    with serve_app(upstream.app(config=accord.ServerConfig(grpc_port=0))) as upstream_url:
        agent = accord.gateway(upstream_url, transport=transport, version=version)
        with serve_app(agent.app(config=accord.ServerConfig(grpc_port=0))) as url:
            yield url


@pytest.mark.parametrize("upstream_interface", [("HTTP+JSON", "1.0"), ("GRPC", "1.0")], ids=named)
async def test_the_extensions_the_upstream_activated_are_echoed(
    upstream_interface: tuple[str, str],
) -> None:
    with gateway_to_reporter(*upstream_interface) as url:
        for caller in CALLERS:
            assert await activated_through(url, caller) == ([Marker.uri], [Marker.uri])


async def test_the_gateway_says_what_a_0_3_upstream_activated_and_no_more(
    echo: OfficialEcho,
) -> None:
    """An accord agent on 0.3 JSON-RPC says it activated Marker: so does the gateway, in
    0.3's header to a 0.3 caller. The official SDK lists Marker on its card but never says
    it activated an extension: neither does the gateway, though its card lists Marker too."""
    with gateway_to_reporter("JSONRPC", "0.3") as url:
        for caller in CALLERS:
            assert await activated_through(url, caller) == ([Marker.uri], [Marker.uri])
        async with httpx.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
                "message": {"kind": "message", "messageId": new_id(), "role": "user",
                            "parts": [{"kind": "text", "text": "raw"}]}}}  # fmt: skip
            raw = await http.post(url, json=body, headers={"X-A2A-Extensions": Marker.uri})
    assert raw.json()["result"]["status"]["state"] == "completed", raw.text
    assert raw.headers["X-A2A-Extensions"] == Marker.uri
    with official_server(echo) as upstream:
        upstream.list_interface("JSONRPC", "0.3")
        upstream.card.capabilities.extensions.append(SdkExtension(uri=Marker.uri))
        agent = accord.gateway(upstream.url)
        with serve_app(agent.app(config=accord.ServerConfig(grpc_port=0))) as url:
            async with Client(url) as client:
                card = await client.get_card()
            for caller in CALLERS:
                assert await activated_through(url, caller) == ([], [])
    assert [e.uri for e in card.capabilities.extensions or ()] == [Marker.uri]


async def test_push_notifications_from_the_gateway_for_an_upstream_without(
    echo: OfficialEcho,
) -> None:
    hook = NotificationHook()
    with official_server(echo) as upstream, receiving(hook) as hook_url:
        upstream.card.capabilities.push_notifications = False
        upstream.list_interface("JSONRPC", "0.3")
        agent = accord.gateway(upstream.url)
        config = accord.ServerConfig(push_allow=LOOPBACK)
        with serve_app(agent.app(config=config)) as url:
            async with Client(url, version="0.3") as client:
                card = await client.get_card()
                push = PushNotificationConfig(url=hook_url, token="t0k3n")
                task = await client.send(user("notify me"), push=push)
                await hook.reached("completed").wait()
    assert card.capabilities.push_notifications
    assert isinstance(task, Task)
    assert hook.versions() == {"0.3"}
    assert all(body["id"] == task.id for _, body in hook.calls)
    assert all(headers["x-a2a-notification-token"] == "t0k3n" for headers, _ in hook.calls)


async def test_the_upstream_is_called_with_the_gateways_own_credentials() -> None:
    """Its refusal of them is the gateway's trouble, not the caller's: an internal error
    naming it, never the upstream's 401 passed on as if the caller had failed."""
    upstream = accord.Agent(
        Reports(), name="Guarded", security=Security(ApiKey(keys={"gw-key": "gateway"}))
    )
    with serve_app(upstream.app()) as upstream_url:
        keyed = accord.gateway(upstream_url, credentials=Credentials(ApiKeyCredential("gw-key")))
        keyless = accord.gateway(upstream_url)
        with serve_app(keyed.app()) as url, serve_app(keyless.app()) as keyless_url:
            async with Client(url, version="1.0") as client:
                task = await client.send(user("hello"))
            async with Client(keyless_url, version="1.0") as client:
                with pytest.raises(InternalError, match="refused the gateway's credentials"):
                    await client.send(user("hello"))
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED


def test_the_gateway_command_says_when_it_cannot_read_the_upstreams_card() -> None:
    result = CliRunner().invoke(app, ["gateway", "http://127.0.0.1:9/", "--port", "8000"])
    assert result.exit_code == 2, result.output
    assert "cannot read the card of http://127.0.0.1:9/" in result.output
    assert result.output.count("\n") == 1


def test_the_gateway_command_takes_every_option_of_serve() -> None:
    serve_help = CliRunner().invoke(app, ["serve", "--help"]).output
    gateway_help = CliRunner().invoke(app, ["gateway", "--help"]).output
    options = set(re.findall(r"--[a-z][a-z-]*", serve_help))
    assert len(options) > 30 and options <= set(re.findall(r"--[a-z][a-z-]*", gateway_help))


async def test_a_task_that_asks_for_input_is_answered_through_the_gateway() -> None:
    """The upstream's stream for the answer opens with the task as it waited for input: the
    gateway follows on to the task's end, not stopping at that first snapshot."""
    with serve_app(currency.agent.app()) as upstream_url:
        agent = accord.gateway(upstream_url)
        with serve_app(agent.app()) as url:
            async with Client(url, version="1.0") as client:
                asked = await client.send(user("convert 100 USD"))
                assert isinstance(asked, Task)
                answered = await client.send(user("to EUR", task_id=asked.id))
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert isinstance(answered, Task) and answered.status.state is TaskState.COMPLETED
    assert answered.artifacts and "EUR" in answered.artifacts[0].text


@pytest.mark.parametrize(
    "configuration",
    [None, MessageSendConfiguration(), MessageSendConfiguration(accepted_output_modes=[]),
     MessageSendConfiguration(accepted_output_modes=["text/plain"], history_length=2)],
)  # fmt: skip
@pytest.mark.parametrize("metadata", [None, {"k": "v"}])
def test_a_blocking_send_relays_what_the_clients_send_would(
    configuration: MessageSendConfiguration | None, metadata: dict[str, str] | None
) -> None:
    message = user_message("hi")
    params = MessageSendParams(message=message, configuration=configuration, metadata=metadata)
    modes = configuration.accepted_output_modes if configuration else None
    sent = send_params(message, blocking=True, accepted_output_modes=modes, metadata=metadata)
    assert blocking_send(params).to_json() == sent.to_json()
