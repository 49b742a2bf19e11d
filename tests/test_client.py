"""The client against real servers on loopback: card discovery, every method, errors, streams."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import accord
from accord import A2AClientError, Client, SyncClient
from accord.client import card_urls
from accord.client.interfaces import jsonrpc_url
from accord.errors import (
    AuthenticatedExtendedCardNotConfigured,
    InvalidRequest,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
)
from accord.samples import echo
from accord.types import (
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    new_id,
)
from agents_for_tests import SAFETY_TIMEOUT, GatedStreamer, NeverFinishes, Raises
from live_server import serve_app

AGENT_CARD_PATH = "/.well-known/agent-card.json"
LEGACY_CARD_PATH = "/.well-known/agent.json"


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    with serve_app(echo.agent.app()) as url:
        yield url


@pytest.fixture(scope="module")
def message_url() -> Iterator[str]:
    with serve_app(echo.message_agent.app()) as url:
        yield url


class RequestLog:
    """The requests an httpx client sent, recorded by an event hook."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.responses: list[httpx.Response] = []

    async def on_request(self, request: httpx.Request) -> None:
        self.requests.append(request)

    async def on_response(self, response: httpx.Response) -> None:
        self.responses.append(response)

    @property
    def urls(self) -> list[str]:
        return [f"{request.method} {request.url}" for request in self.requests]

    @property
    def rpc_bodies(self) -> list[dict[str, Any]]:
        return [
            json.loads(request.content) for request in self.requests if request.method == "POST"
        ]


@pytest.fixture
async def logged_http() -> AsyncIterator[tuple[httpx.AsyncClient, RequestLog]]:
    log = RequestLog()
    hooks = {"request": [log.on_request], "response": [log.on_response]}
    async with httpx.AsyncClient(event_hooks=hooks) as http:  # type: ignore[arg-type]
        yield http, log


def fixed_app(handlers: dict[str, Callable[[Request], Response]], seen: list[str]) -> Starlette:
    """A server answering only `handlers`' paths (GET and POST), recording each path asked for."""

    async def dispatch(request: Request) -> Response:
        seen.append(request.url.path)
        return handlers[request.url.path](request)

    async def not_found(request: Request, exc: Exception) -> Response:
        seen.append(request.url.path)
        return Response("not here", 404)

    routes = [Route(path, dispatch, methods=["GET", "POST"]) for path in handlers]
    return Starlette(routes=routes, exception_handlers={404: not_found})


def card_pointing_to(path: str) -> Callable[[Request], Response]:
    """A handler serving the echo agent's card with its JSON-RPC URL at `path` of this server."""

    def handler(request: Request) -> Response:
        card = echo.agent.card(str(request.base_url).rstrip("/") + path)
        return Response(card.to_json(), media_type="application/json")

    return handler


def texts(task: Task) -> list[str]:
    return [p.text for a in task.artifacts or () for p in a.parts if isinstance(p, TextPart)]


# --- card resolution -------------------------------------------------------------------------


def test_card_urls_try_both_well_known_paths_for_a_base_url() -> None:
    assert card_urls("http://agent.example/") == [
        "http://agent.example/.well-known/agent-card.json",
        "http://agent.example/.well-known/agent.json",
    ]
    assert card_urls("http://agent.example/a2a/echo") == [
        "http://agent.example/a2a/echo/.well-known/agent-card.json",
        "http://agent.example/a2a/echo/.well-known/agent.json",
    ]


def test_jsonrpc_url_picks_the_json_rpc_interface() -> None:
    card = echo.agent.card("http://agent.example/")
    grpc_first = card.model_copy(
        update={
            "url": "http://agent.example:50051",
            "preferred_transport": "GRPC",
            "additional_interfaces": [
                AgentInterface(url="http://agent.example:50051", transport="GRPC"),
                AgentInterface(url="http://agent.example/rpc", transport="JSONRPC"),
            ],
        }
    )
    grpc_only = grpc_first.model_copy(update={"additional_interfaces": None})

    assert jsonrpc_url(card) == "http://agent.example/"
    assert jsonrpc_url(grpc_first) == "http://agent.example/rpc"
    with pytest.raises(A2AClientError, match="offers no JSON-RPC interface"):
        jsonrpc_url(grpc_only)


@pytest.mark.parametrize("path", [AGENT_CARD_PATH, LEGACY_CARD_PATH])
def test_card_urls_use_a_card_url_as_given(path: str) -> None:
    assert card_urls("http://agent.example" + path) == ["http://agent.example" + path]


async def test_card_comes_from_the_agent_card_path(
    echo_url: str, logged_http: tuple[httpx.AsyncClient, RequestLog]
) -> None:
    http, log = logged_http
    async with Client(echo_url, http_client=http) as client:
        card = await client.get_card()
        assert await client.get_card() is card  # resolved once

    assert card.name == "Echo"
    assert card.url == echo_url + "/"
    assert client.card is card
    assert log.urls == [f"GET {echo_url}{AGENT_CARD_PATH}"]


@pytest.mark.parametrize("path", [AGENT_CARD_PATH, LEGACY_CARD_PATH])
async def test_card_url_is_used_directly(
    echo_url: str, path: str, logged_http: tuple[httpx.AsyncClient, RequestLog]
) -> None:
    http, log = logged_http
    async with Client(echo_url + path, http_client=http) as client:
        task = await client.send("via the card url")

    assert isinstance(task, Task)
    assert texts(task) == ["via the card url"]
    assert log.urls == [f"GET {echo_url}{path}", f"POST {echo_url}/"]


async def test_card_falls_back_to_the_legacy_path() -> None:
    seen: list[str] = []
    app = fixed_app({LEGACY_CARD_PATH: card_pointing_to("/")}, seen)
    with serve_app(app) as url:
        async with Client(url) as client:
            card = await client.get_card()

    assert card.name == "Echo"
    assert seen == [AGENT_CARD_PATH, LEGACY_CARD_PATH]


def json_response(body: Any, status: int = 200) -> Callable[[Request], Response]:
    return lambda request: Response(json.dumps(body), status, media_type="application/json")


@pytest.mark.parametrize(
    ("handler", "reason"),
    [
        pytest.param(
            lambda request: Response("oops", 500), r"answered HTTP 500", id="server-error"
        ),
        pytest.param(
            lambda request: Response("<html>hello</html>", media_type="text/html"),
            r"is not JSON",
            id="not-json",
        ),
        pytest.param(
            json_response({"name": "half a card"}), r"is not valid: description", id="not-a-card"
        ),
    ],
)
async def test_bad_card_raises_a_client_error(
    handler: Callable[[Request], Response], reason: str
) -> None:
    with serve_app(fixed_app({AGENT_CARD_PATH: handler}, [])) as url:
        async with Client(url) as client:
            with pytest.raises(A2AClientError, match=reason):
                await client.get_card()


async def test_no_card_at_either_path_raises_a_client_error() -> None:
    with serve_app(fixed_app({}, [])) as url:
        async with Client(url) as client:
            with pytest.raises(A2AClientError, match=re.escape(LEGACY_CARD_PATH)) as caught:
                await client.get_card()
    assert caught.value.status_code == 404


async def test_unreachable_agent_raises_a_client_error() -> None:
    with serve_app(echo.agent.app()) as url:
        pass  # the server is gone: its port refuses connections
    async with Client(url) as client:
        with pytest.raises(A2AClientError, match="cannot connect"):
            await client.send("anyone there?")


# --- the methods against the echo agents -----------------------------------------------------


async def test_send_returns_the_completed_task(echo_url: str) -> None:
    async with Client(echo_url) as client:
        task = await client.send("hello")

    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert texts(task) == ["hello"]
    assert task.history is not None
    assert [(m.role, m.text) for m in task.history] == [(Role.USER, "hello")]


async def test_send_to_a_message_agent_returns_a_message(message_url: str) -> None:
    async with Client(message_url) as client:
        reply = await client.send("hello", context_id="ctx-1")

    assert isinstance(reply, Message)
    assert reply.role is Role.AGENT
    assert reply.text == "hello"
    assert reply.context_id == "ctx-1"


async def test_send_carries_extra_parts_and_the_send_options(echo_url: str) -> None:
    file = FilePart(file=FileWithBytes(bytes="aGk=", name="hi.txt", mime_type="text/plain"))
    data = DataPart(data={"answer": 42})
    async with Client(echo_url) as client:
        first = await client.send("first")
        assert isinstance(first, Task)
        task = await client.send(
            "with parts",
            parts=[file, data],
            context_id=first.context_id,
            reference_task_ids=[first.id],
            history_length=1,
        )

    assert isinstance(task, Task)
    assert task.context_id == first.context_id
    assert task.history is not None and len(task.history) == 1
    sent = task.history[0]
    assert sent.parts == [TextPart(text="with parts"), file, data]
    assert sent.reference_task_ids == [first.id]


async def test_send_takes_a_whole_message(echo_url: str) -> None:
    message = Message(
        message_id="m-1", role=Role.USER, parts=[TextPart(text="prepared")], metadata={"k": 1}
    )
    async with Client(echo_url) as client:
        task = await client.send(message, history_length=0)
        assert isinstance(task, Task)
        fetched = await client.get_task(task.id)

    assert texts(task) == ["prepared"]
    assert task.history is None
    assert fetched.history is not None
    sent = fetched.history[0]
    assert (sent.message_id, sent.metadata, sent.task_id) == ("m-1", {"k": 1}, task.id)


async def test_request_ids_are_increasing_integers(
    echo_url: str, logged_http: tuple[httpx.AsyncClient, RequestLog]
) -> None:
    http, log = logged_http
    async with Client(echo_url, http_client=http, version="0.3") as client:  # 0.3 bodies
        task = await client.send("one", metadata={"trace": "t-1"}, accepted_output_modes=["text/*"])
        await client.get_task(task.id)
        async for _ in client.stream("two", history_length=2):
            pass

    bodies = log.rpc_bodies
    assert [(body["jsonrpc"], body["id"], body["method"]) for body in bodies] == [
        ("2.0", 1, "message/send"),
        ("2.0", 2, "tasks/get"),
        ("2.0", 3, "message/stream"),
    ]
    send_params, get_params, stream_params = (body["params"] for body in bodies)
    assert send_params["configuration"] == {"acceptedOutputModes": ["text/*"], "blocking": True}
    assert send_params["metadata"] == {"trace": "t-1"}
    assert send_params["message"]["role"] == "user"
    assert get_params == {"id": task.id}
    assert stream_params["configuration"] == {"historyLength": 2}
    assert not http.is_closed  # a client we were given stays open


async def test_extra_headers_go_with_every_request() -> None:
    seen: list[tuple[str, str | None]] = []
    app = echo.agent.app()

    async def recording_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            seen.append((scope["path"], headers.get(b"x-api-key", b"").decode() or None))
        await app(scope, receive, send)

    with serve_app(recording_app) as url:
        async with Client(url, headers={"X-API-Key": "secret"}) as client:
            await client.send("hi")
            async for _ in client.stream("hi again"):
                pass

    assert seen == [(AGENT_CARD_PATH, "secret"), ("/", "secret"), ("/", "secret")]


async def test_get_task_trims_the_history(echo_url: str) -> None:
    async with Client(echo_url) as client:
        task = await client.send("remember me")
        assert isinstance(task, Task)
        full = await client.get_task(task.id)
        trimmed = await client.get_task(task.id, history_length=0)

    assert full.id == task.id
    assert full.status.state is TaskState.COMPLETED
    assert full.history is not None and full.history[0].text == "remember me"
    assert trimmed.history is None


async def test_stream_yields_the_task_then_its_updates_in_order(echo_url: str) -> None:
    async with Client(echo_url) as client:
        events = [event async for event in client.stream("streamed")]

    assert [type(event) for event in events] == [
        Task,
        TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]
    task, working, artifact, completed = events
    assert isinstance(task, Task) and task.status.state is TaskState.SUBMITTED
    assert isinstance(working, TaskStatusUpdateEvent)
    assert working.status.state is TaskState.WORKING and not working.final
    assert isinstance(artifact, TaskArtifactUpdateEvent)
    assert artifact.artifact.parts == [TextPart(text="streamed")]
    assert isinstance(completed, TaskStatusUpdateEvent)
    assert completed.status.state is TaskState.COMPLETED and completed.final
    assert {event.task_id for event in events[1:]} == {task.id}  # type: ignore[union-attr]


async def test_stream_from_a_message_agent_yields_one_message(message_url: str) -> None:
    async with Client(message_url) as client:
        events = [event async for event in client.stream("just this")]

    assert len(events) == 1
    assert isinstance(events[0], Message) and events[0].text == "just this"


async def test_leaving_a_stream_early_closes_it_and_the_task_goes_on() -> None:
    executor = GatedStreamer(chunks=2)
    log = RequestLog()
    with serve_app(accord.Agent(executor, name="Gated").app()) as url:
        async with (
            httpx.AsyncClient(event_hooks={"response": [log.on_response]}) as http,
            Client(url, http_client=http) as client,
        ):
            async with client.stream("go") as events:
                first = await anext(events)
            assert isinstance(first, Task)
            stream_response = log.responses[-1]
            assert stream_response.headers["content-type"].startswith("text/event-stream")
            assert stream_response.is_closed

            await executor.started.wait()
            executor.release_all()
            await executor.finished.wait()
            task = await client.get_task(first.id)

    assert task.status.state is TaskState.COMPLETED
    assert texts(task) == ["chunk 0", "chunk 1"]


async def test_breaking_out_of_a_stream_leaves_the_client_usable(echo_url: str) -> None:
    async with Client(echo_url) as client:
        async for event in client.stream("interrupted"):
            assert isinstance(event, Task)
            break
        task = await client.send("still works")

    assert isinstance(task, Task) and texts(task) == ["still works"]


async def test_non_blocking_send_returns_at_once_and_resubscribe_follows() -> None:
    executor = GatedStreamer(chunks=1)
    with serve_app(accord.Agent(executor, name="Gated").app()) as url:
        async with Client(url) as client:
            task = await client.send("start", blocking=False)
            assert isinstance(task, Task)
            assert not task.status.state.is_terminal

            async with client.resubscribe(task.id) as events:
                snapshot = await anext(events)
                executor.release_all()
                rest = [event async for event in events]

    assert isinstance(snapshot, Task) and snapshot.id == task.id
    assert isinstance(rest[-1], TaskStatusUpdateEvent)
    assert rest[-1].status.state is TaskState.COMPLETED and rest[-1].final
    chunks = [e.artifact.parts for e in rest if isinstance(e, TaskArtifactUpdateEvent)]
    assert chunks == [[TextPart(text="chunk 0")]]


async def test_a_stream_resumes_after_its_last_event_id() -> None:
    executor = GatedStreamer(chunks=3)
    log = RequestLog()
    with serve_app(accord.Agent(executor, name="Gated").app()) as url:
        async with (
            httpx.AsyncClient(event_hooks={"request": [log.on_request]}) as http,
            Client(url, http_client=http) as client,
        ):
            async with client.stream("go") as events:
                assert events.last_event_id is None
                task = await anext(events)
                ids = [events.last_event_id]
                await anext(events)  # working
                ids.append(events.last_event_id)
                executor.steps[0].open()
                await anext(events)  # chunk 0
                ids.append(events.last_event_id)
            broke_off_at = events.last_event_id
            executor.release_all()
            await executor.finished.wait()  # what follows is only in the server's log now

            async with client.resubscribe(task.id, last_event_id=broke_off_at) as resumed:
                rest = []
                async for event in resumed:
                    rest.append(event)
                    ids.append(resumed.last_event_id)

    assert isinstance(task, Task)
    assert log.requests[-1].headers["Last-Event-ID"] == str(broke_off_at)
    assert "Last-Event-ID" not in log.requests[-2].headers
    assert ids == list(range(ids[0], ids[0] + 6))  # one id per event, none skipped or repeated
    assert [type(event) for event in rest] == [
        TaskArtifactUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]
    chunks = [e.artifact.parts for e in rest if isinstance(e, TaskArtifactUpdateEvent)]
    assert chunks == [[TextPart(text="chunk 1")], [TextPart(text="chunk 2")]]
    assert isinstance(rest[-1], TaskStatusUpdateEvent)
    assert rest[-1].status.state is TaskState.COMPLETED


async def test_a_reply_message_has_no_event_id(message_url: str) -> None:
    async with Client(message_url) as client, client.stream("no id") as events:
        replies = [event async for event in events]

    assert [type(reply) for reply in replies] == [Message]
    assert events.last_event_id is None


async def test_cancel_task_cancels_a_running_task() -> None:
    executor = NeverFinishes()
    with serve_app(accord.Agent(executor, name="Busy").app()) as url:
        async with Client(url) as client:
            task = await client.send("work forever", blocking=False)
            assert isinstance(task, Task)
            await executor.started.wait()
            canceled = await client.cancel_task(task.id)
            fetched = await client.get_task(task.id)

    assert canceled.id == task.id
    assert canceled.status.state is TaskState.CANCELED
    assert fetched.status.state is TaskState.CANCELED


async def test_extended_card() -> None:
    extended = echo.agent.card("").model_copy(
        update={
            "name": "Echo (extended)",
            "skills": [AgentSkill(id="echo", name="Echo", description="Echoes", tags=["demo"])],
        }
    )
    agent = accord.Agent(echo.agent.executor, name="Echo", extended_card=extended)
    with serve_app(agent.app()) as url:
        async with Client(url) as client:
            public = await client.get_card()
            card = await client.get_extended_card()

    assert public.supports_authenticated_extended_card is True
    assert isinstance(card, AgentCard)
    assert card.name == "Echo (extended)"
    assert [skill.id for skill in card.skills] == ["echo"]


# --- typed errors ----------------------------------------------------------------------------


async def test_unknown_task_raises_task_not_found(echo_url: str) -> None:
    async with Client(echo_url) as client:
        with pytest.raises(TaskNotFound, match="no-such-task") as caught:
            await client.get_task("no-such-task")
    assert caught.value.code == -32001


async def test_canceling_a_completed_task_raises_task_not_cancelable(echo_url: str) -> None:
    async with Client(echo_url) as client:
        task = await client.send("done")
        assert isinstance(task, Task)
        with pytest.raises(TaskNotCancelable):
            await client.cancel_task(task.id)


async def test_message_to_a_completed_task_raises_unsupported_operation(echo_url: str) -> None:
    async with Client(echo_url) as client:
        task = await client.send("done")
        assert isinstance(task, Task)
        with pytest.raises(UnsupportedOperation):
            await client.send("more", task_id=task.id)
        with pytest.raises(UnsupportedOperation):
            async for _ in client.stream("more", task_id=task.id):
                pass


async def test_missing_extended_card_raises_its_error(echo_url: str) -> None:
    async with Client(echo_url) as client:
        with pytest.raises(AuthenticatedExtendedCardNotConfigured):
            await client.get_extended_card()


async def test_error_inside_a_stream_raises_the_typed_error() -> None:
    refusing = Raises(UnsupportedOperation("not today"), after_start=False)
    with serve_app(accord.Agent(refusing, name="Refuses").app()) as url:
        async with Client(url) as client:
            with pytest.raises(UnsupportedOperation, match="not today"):
                async for _ in client.stream("please"):
                    pass


async def test_error_with_an_http_error_status_is_still_a_typed_error() -> None:
    with serve_app(echo.agent.app(max_body_bytes=2000)) as url:
        async with Client(url) as client:
            with pytest.raises(InvalidRequest, match="exceeds the limit") as caught:
                await client.send("x" * 5000)
    assert caught.value.code == -32600


@pytest.mark.parametrize(
    ("handler", "reason", "status"),
    [
        pytest.param(
            lambda request: Response("<h1>Bad Gateway</h1>", 502, media_type="text/html"),
            "answered HTTP 502 without a JSON-RPC response",
            502,
            id="http-error",
        ),
        pytest.param(
            lambda request: Response("hello", media_type="text/plain"),
            "not a JSON-RPC response",
            None,
            id="not-json",
        ),
        pytest.param(
            json_response({"jsonrpc": "2.0", "id": 1, "result": {"kind": "weather"}}),
            "invalid result",
            None,
            id="invalid-result",
        ),
    ],
)
async def test_broken_endpoint_raises_a_client_error(
    handler: Callable[[Request], Response], reason: str, status: int | None
) -> None:
    app = fixed_app({AGENT_CARD_PATH: card_pointing_to("/rpc"), "/rpc": handler}, [])
    with serve_app(app) as url:
        async with Client(url) as client:
            with pytest.raises(A2AClientError, match=reason) as caught:
                await client.send("hello")
    assert caught.value.status_code == status


# --- the sync client -------------------------------------------------------------------------


def test_sync_client_runs_every_call(echo_url: str) -> None:
    with SyncClient(echo_url) as client:
        card = client.get_card()
        task = client.send("sync hello")
        assert isinstance(task, Task)
        fetched = client.get_task(task.id, history_length=0)
        kinds = [event.kind for event in client.stream("sync stream")]
        with pytest.raises(TaskNotCancelable):
            client.cancel_task(task.id)
        with pytest.raises(TaskNotFound):
            client.get_task("missing")

    assert card.name == "Echo" and client.card is card
    assert texts(task) == ["sync hello"]
    assert fetched.status.state is TaskState.COMPLETED and fetched.history is None
    assert kinds == ["task", "status-update", "artifact-update", "status-update"]


def test_sync_stream_can_be_left_early(echo_url: str) -> None:
    with SyncClient(echo_url) as client:
        for event in client.stream("leave early"):
            assert isinstance(event, Task)
            first = event
            break
        task = client.send("then more")

    assert isinstance(task, Task) and texts(task) == ["then more"]
    assert first.history is not None and first.history[0].text == "leave early"


def test_leaving_a_sync_stream_early_ends_it() -> None:
    app = accord.Agent(NeverFinishes(), name="Busy").app()
    stream_ended = threading.Event()

    async def watched_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        try:
            await app(scope, receive, send)
        finally:
            if scope["type"] == "http" and scope["method"] == "POST":
                stream_ended.set()

    with serve_app(watched_app) as url, SyncClient(url) as client:
        for event in client.stream("forever"):
            assert isinstance(event, Task)
            break
        assert stream_ended.wait(SAFETY_TIMEOUT), "the server still streams to the client"


def test_sync_resubscribe_and_cancel() -> None:
    executor = NeverFinishes()
    with serve_app(accord.Agent(executor, name="Busy").app()) as url, SyncClient(url) as client:
        task = client.send("busy", blocking=False)
        assert isinstance(task, Task)
        events = client.resubscribe(task.id)
        snapshot = next(events)
        canceled = client.cancel_task(task.id)
        rest = list(events)

    assert isinstance(snapshot, Task) and snapshot.id == task.id
    assert canceled.status.state is TaskState.CANCELED
    assert isinstance(rest[-1], TaskStatusUpdateEvent)
    assert rest[-1].status.state is TaskState.CANCELED and rest[-1].final


def test_sync_stream_resumes_after_its_last_event_id() -> None:
    executor = GatedStreamer(chunks=2)
    with (
        serve_app(accord.Agent(executor, name="Gated").app()) as url,
        SyncClient(url) as client,
    ):
        with client.stream("go") as events:
            task = next(events)
            first_id = events.last_event_id
            next(events)  # working
            broke_off_at = events.last_event_id
        executor.release_all()
        resumed = client.resubscribe(task.id, last_event_id=broke_off_at)
        rest = list(resumed)

    assert isinstance(task, Task)
    assert first_id is not None and broke_off_at == first_id + 1
    assert [event.kind for event in rest] == ["artifact-update", "artifact-update", "status-update"]
    assert resumed.last_event_id == broke_off_at + len(rest)
    assert isinstance(rest[-1], TaskStatusUpdateEvent)
    assert rest[-1].status.state is TaskState.COMPLETED


def test_sync_client_reports_connection_errors() -> None:
    with serve_app(echo.agent.app()) as url:
        pass
    with SyncClient(url) as client, pytest.raises(A2AClientError, match="cannot connect"):
        client.get_card()


# --- the spec's workflows (section 9) end to end ---------------------------------------------


async def test_spec_9_2_basic_execution(echo_url: str, message_url: str) -> None:
    async with Client(echo_url) as client:
        task = await client.send("tell me a joke")
    async with Client(message_url) as client:
        reply = await client.send("tell me a joke")

    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert texts(task) == ["tell me a joke"]
    assert task.history is not None
    sent = task.history[0]
    assert (sent.role, sent.task_id, sent.context_id) == (Role.USER, task.id, task.context_id)
    assert isinstance(reply, Message)
    assert reply.text == "tell me a joke" and reply.context_id


class PaperWriter(accord.AgentExecutor):
    """Writes a paper about the attached picture in three streamed sections."""

    async def execute(
        self, context: accord.RequestContext, events: accord.agents.EventSink
    ) -> None:
        pictures = [p.file for p in context.message.parts if isinstance(p, FilePart)]
        subject = ", ".join(f.mime_type or "?" for f in pictures)
        updater = accord.TaskUpdater(context, events)
        await updater.start_work()
        paper = await updater.add_artifact(f"<section 1 on {subject}>", last_chunk=False)
        await updater.append_artifact(paper, "<section 2>", last_chunk=False)
        await updater.append_artifact(paper, "<section 3>", last_chunk=True)
        await updater.complete()


async def test_spec_9_3_streaming_task_execution() -> None:
    picture = FilePart(file=FileWithBytes(bytes="iVBORw0KGgo=", mime_type="image/png"))
    with serve_app(accord.Agent(PaperWriter(), name="Paper writer").app()) as url:
        async with Client(url) as client:
            events = [
                event
                async for event in client.stream(
                    "write a long paper describing the attached pictures", parts=[picture]
                )
            ]

    task = events[0]
    assert isinstance(task, Task) and task.status.state is TaskState.SUBMITTED
    assert task.history is not None and task.history[0].parts[1] == picture
    chunks = [event for event in events if isinstance(event, TaskArtifactUpdateEvent)]
    assert [(c.append, c.last_chunk) for c in chunks] == [
        (None, False),
        (True, False),
        (True, True),
    ]
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    paper = "".join(p.text for c in chunks for p in c.artifact.parts if isinstance(p, TextPart))
    assert paper == "<section 1 on image/png><section 2><section 3>"
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED and last.final
    states = [e.status.state for e in events if isinstance(e, TaskStatusUpdateEvent)]
    assert states == [TaskState.WORKING, TaskState.COMPLETED]


FLIGHT_QUESTION = "Where would you like to fly to, and from where? And when?"
AIRPORTS = re.compile(r"\((?P<origin>[A-Z]{3})\).*\((?P<destination>[A-Z]{3})\)")


@accord.agent(name="Flight booker", description="Books flights, asking for what is missing.")
async def flight_booker(context: accord.RequestContext) -> AsyncIterator[Any]:
    route = AIRPORTS.search(context.text)
    if route is None:
        question = Message.agent(
            FLIGHT_QUESTION, task_id=context.task_id, context_id=context.context_id
        )
        yield TaskStatus(state=TaskState.INPUT_REQUIRED, message=question)
        return
    itinerary = {"confirmationId": "XYZ123", **route.groupdict()}
    yield Artifact(
        artifact_id=new_id(), name="FlightItinerary.json", parts=[DataPart(data=itinerary)]
    )


@pytest.fixture(scope="module")
def booker_url() -> Iterator[str]:
    with serve_app(flight_booker.app()) as url:
        yield url


FOLLOW_UP = "I want to fly from New York (JFK) to London (LHR) around October 10th."


def itinerary_of(task: Task) -> dict[str, Any]:
    assert task.artifacts is not None and len(task.artifacts) == 1
    artifact = task.artifacts[0]
    assert artifact.name == "FlightItinerary.json"
    part = artifact.parts[0]
    assert isinstance(part, DataPart)
    return part.data


async def test_spec_9_4_multi_turn_interaction(booker_url: str) -> None:
    async with Client(booker_url) as client:
        asked = await client.send("I'd like to book a flight.")
        assert isinstance(asked, Task)
        answered = await client.send(FOLLOW_UP, task_id=asked.id, context_id=asked.context_id)

    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert asked.status.message is not None and asked.status.message.text == FLIGHT_QUESTION
    assert isinstance(answered, Task)
    assert (answered.id, answered.context_id) == (asked.id, asked.context_id)
    assert answered.status.state is TaskState.COMPLETED
    assert itinerary_of(answered) == {
        "confirmationId": "XYZ123",
        "origin": "JFK",
        "destination": "LHR",
    }
    assert answered.history is not None
    assert [(m.role, m.text) for m in answered.history] == [
        (Role.USER, "I'd like to book a flight."),
        (Role.AGENT, FLIGHT_QUESTION),
        (Role.USER, FOLLOW_UP),
    ]


async def test_spec_9_4_multi_turn_interaction_streamed(booker_url: str) -> None:
    async with Client(booker_url) as client:
        first_turn = [event async for event in client.stream("Book me a flight.")]
        task = first_turn[0]
        assert isinstance(task, Task)
        second_turn = [event async for event in client.stream(FOLLOW_UP, task_id=task.id)]
        done = await client.get_task(task.id)

    asking = first_turn[-1]
    assert isinstance(asking, TaskStatusUpdateEvent)
    assert asking.status.state is TaskState.INPUT_REQUIRED and asking.final
    assert asking.status.message is not None and asking.status.message.text == FLIGHT_QUESTION
    finished = second_turn[-1]
    assert isinstance(finished, TaskStatusUpdateEvent)
    assert finished.task_id == task.id and finished.status.state is TaskState.COMPLETED
    assert itinerary_of(done)["destination"] == "LHR"
