"""The client speaking A2A 0.1 to a real accord server: each operation, streams, errors, the CLI."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from typer.testing import CliRunner

import accord
from accord import A2AClientError, Client, SyncClient
from accord.cli.main import app as cli
from accord.client.interfaces import select_interface
from accord.client.transports import TRANSPORTS
from accord.codecs import v0_1_json
from accord.errors import TaskNotCancelable, TaskNotFound
from accord.samples import echo
from accord.types import (
    AgentCard,
    AgentInterface,
    DataPart,
    FilePart,
    FileWithBytes,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
    new_id,
)
from agents_for_tests import AsksThenCompletes, GatedStreamer, NeverFinishes, Switchboard
from live_server import serve_app
from served_process import accord_command

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


@dataclass
class Call:
    """One JSON-RPC request as the server received it."""

    method: str
    params: dict[str, Any]
    version: str | None


@dataclass
class Recorder:
    """An ASGI app in front of an accord app: keeps each JSON-RPC request it passes on, and
    serves `card` (a JSON object) at the legacy card path instead of the app's card."""

    app: Any
    card: dict[str, Any] | None = None
    calls: list[Call] = field(default_factory=list)

    @property
    def methods(self) -> list[str]:
        return [call.method for call in self.calls]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.card is not None and scope["path"] in CARD_PATHS:
            await self._serve_card(scope["path"], send)
            return
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        received, body = [], b""
        while True:
            message = await receive()
            received.append(message)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body)
        headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
        self.calls.append(Call(request["method"], request["params"], headers.get("a2a-version")))

        async def replay() -> Any:
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, send)

    async def _serve_card(self, path: str, send: Any) -> None:
        found = path == "/.well-known/agent.json"  # a 0.1 agent has only the legacy path
        body = json.dumps(self.card).encode() if found else b"not here"
        kind = b"application/json" if found else b"text/plain"
        await send(
            {
                "type": "http.response.start",
                "status": 200 if found else 404,
                "headers": [(b"content-type", kind)],
            }
        )
        await send({"type": "http.response.body", "body": body})


def served(
    executor: accord.AgentExecutor, **options: Any
) -> tuple[Recorder, AbstractContextManager[str]]:
    """A Recorder in front of `executor`'s agent, and the server to enter (it yields the URL)."""
    agent = accord.Agent(executor, name="Legacy", **options)
    recorder = Recorder(agent.app())
    return recorder, serve_app(recorder)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Recorder]]:
    """Echo (tasks), `ask ...` (asks, then completes) and `reply ...` (a plain message)."""
    routes = {"ask": AsksThenCompletes(), "reply": echo.message_agent.executor}
    recorder, serving = served(Switchboard(routes, echo.agent.executor), push_notifications=True)
    with serving as url:
        yield url, recorder


@pytest.fixture
def recorded(server: tuple[str, Recorder]) -> Iterator[tuple[str, Recorder]]:
    """The module's server, its recorder emptied for this test."""
    url, recorder = server
    recorder.calls.clear()
    yield url, recorder


def walk(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) of the objects in a JSON document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def ids_of(event: StreamEvent) -> tuple[str, str]:
    """The task and context ids of a 0.1 stream event (a status or artifact update)."""
    assert isinstance(event, TaskStatusUpdateEvent | TaskArtifactUpdateEvent)
    return event.task_id, event.context_id


def texts(task: Task) -> list[str]:
    return [a.text for a in task.artifacts or ()]


# --- send ------------------------------------------------------------------------------------


async def test_send_is_tasks_send_with_parts_tagged_by_type(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    async with Client(url, version="0.1") as client:
        task = await client.send("hello 0.1")
        interface = client.interface

    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert texts(task) == ["hello 0.1"]
    assert interface is not None and interface.protocol_version == "0.1"
    [call] = recorder.calls
    assert call.method == "tasks/send"
    assert call.version == "0.1"
    assert call.params["id"] == task.id  # the client chose the task's id
    assert "sessionId" not in call.params  # the server chose the session: the answer names it
    assert call.params["message"] == {
        "role": "user",
        "parts": [{"type": "text", "text": "hello 0.1"}],
    }
    assert not [key for key, _ in walk(call.params) if key in ("kind", "messageId", "contextId")]


async def test_send_uses_the_task_and_context_ids_given(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    task_id, context_id = f"mine-{new_id()}", f"session-{new_id()}"
    async with Client(url, version="0.1") as client:
        task = await client.send("named", task_id=task_id, context_id=context_id)

    assert isinstance(task, Task)
    assert (task.id, task.context_id) == (task_id, context_id)
    assert (recorder.calls[0].params["id"], recorder.calls[0].params["sessionId"]) == (
        task_id,
        context_id,
    )


async def test_a_reply_continuing_a_task_keeps_its_id(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    async with Client(url, version="0.1") as client:
        asked = await client.send("ask me")
        assert isinstance(asked, Task)
        done = await client.send("Ada", task_id=asked.id, context_id=asked.context_id)

    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert asked.status.message is not None
    assert asked.status.message.text == AsksThenCompletes.QUESTION
    assert isinstance(done, Task)
    assert (done.id, done.context_id) == (asked.id, asked.context_id)
    assert done.status.state is TaskState.COMPLETED
    assert texts(done) == ["Hello, Ada!"]
    assert recorder.methods == ["tasks/send", "tasks/send"]
    assert recorder.calls[1].params["id"] == asked.id
    assert recorder.calls[1].params["sessionId"] == asked.context_id


async def test_a_plain_reply_comes_back_as_the_completed_task(
    recorded: tuple[str, Recorder],
) -> None:
    url, _ = recorded
    async with Client(url, version="0.1") as client:
        task = await client.send("reply in words")

    assert isinstance(task, Task)  # 0.1 has no Message result
    assert task.status.state is TaskState.COMPLETED
    assert task.status.message is not None and task.status.message.text == "reply in words"


async def test_send_options_travel_in_0_1_names(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    async with Client(url, version="0.1") as client:
        task = await client.send(
            "options", history_length=1, accepted_output_modes=["text/plain"], metadata={"k": 1}
        )

    assert isinstance(task, Task) and task.history is not None and len(task.history) == 1
    params = recorder.calls[0].params
    assert params["historyLength"] == 1
    assert params["acceptedOutputModes"] == ["text/plain"]
    assert params["metadata"] == {"k": 1}


async def test_a_non_blocking_send_is_refused_before_sending(
    recorded: tuple[str, Recorder],
) -> None:
    url, recorder = recorded
    async with Client(url, version="0.1") as client:
        with pytest.raises(A2AClientError, match=r"0\.1 has no non-blocking send"):
            await client.send("later", blocking=False)
    assert recorder.calls == []


# --- get, cancel, push configs ---------------------------------------------------------------


async def test_get_task_reads_the_task_in_0_1(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    async with Client(url, version="0.1") as client:
        sent = await client.send("keep me")
        assert isinstance(sent, Task)
        got = await client.get_task(sent.id, history_length=5)

    assert (got.id, got.context_id, got.status.state) == (
        sent.id,
        sent.context_id,
        sent.status.state,
    )
    assert texts(got) == ["keep me"]
    assert got.history is not None and got.history[0].parts == [TextPart(text="keep me")]
    assert got.artifacts is not None and sent.artifacts is not None
    assert got.artifacts[0].artifact_id == sent.artifacts[0].artifact_id == "0"  # the 0.1 index
    get = recorder.calls[1]
    assert (get.method, get.version, get.params) == (
        "tasks/get",
        "0.1",
        {"id": sent.id, "historyLength": 5},
    )


async def test_cancel_task_cancels_a_running_task() -> None:
    executor = NeverFinishes()
    recorder, serving = served(executor)
    with serving as url:
        async with Client(url, version="0.1") as client:
            async with client.stream("work forever") as events:
                first = await anext(events)
            assert isinstance(first, TaskStatusUpdateEvent)
            await executor.started.wait()
            canceled = await client.cancel_task(first.task_id)
            fetched = await client.get_task(first.task_id)

    assert canceled.id == first.task_id
    assert canceled.status.state is TaskState.CANCELED
    assert fetched.status.state is TaskState.CANCELED
    assert canceled.context_id == first.context_id
    assert recorder.methods[-2:] == ["tasks/cancel", "tasks/get"]


async def test_push_config_set_and_get(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    async with Client(url, version="0.1") as client:
        task = await client.send("hook me")
        assert isinstance(task, Task)
        webhook = PushNotificationConfig(url="https://hooks.example/0.1", token="secret")
        saved = await client.set_push_config(task.id, webhook)
        got = await client.get_push_config(task.id, saved.push_notification_config.id or "")
        with pytest.raises(A2AClientError, match="one webhook per task"):
            await client.get_push_config(task.id, "another-id")

    for config in (saved, got):
        assert config.task_id == task.id
        assert config.push_notification_config.url == "https://hooks.example/0.1"
        assert config.push_notification_config.token == "secret"
        assert config.push_notification_config.id == task.id  # 0.1's one webhook per task
    set_call, get_call = recorder.calls[1:]
    assert set_call.method == "tasks/pushNotification/set"
    assert set_call.params == {
        "id": task.id,
        "pushNotificationConfig": {"url": "https://hooks.example/0.1", "token": "secret"},
    }
    assert (get_call.method, get_call.params) == ("tasks/pushNotification/get", {"id": task.id})


@pytest.mark.parametrize(
    ("operation", "named"),
    [
        ("list_tasks", "listing tasks needs A2A 1.0"),
        ("list_push_configs", "listing a task's push configs is not part of A2A 0.1"),
        ("delete_push_config", "deleting a task's push config is not part of A2A 0.1"),
        ("get_extended_card", "the authenticated extended card is not part of A2A 0.1"),
    ],
)
async def test_operations_0_1_lacks_raise_a_client_error_naming_the_version(
    recorded: tuple[str, Recorder], operation: str, named: str
) -> None:
    url, recorder = recorded
    arguments = {
        "list_tasks": (),
        "list_push_configs": ("some-task",),
        "delete_push_config": ("some-task", "some-config"),
        "get_extended_card": (),
    }[operation]
    async with Client(url, version="0.1") as client:
        with pytest.raises(A2AClientError, match=named) as caught:
            await getattr(client, operation)(*arguments)

    assert "0.1" in str(caught.value)
    assert recorder.calls == []  # refused before anything was sent


# --- streams ---------------------------------------------------------------------------------


async def test_stream_is_tasks_send_subscribe_end_to_end(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    async with Client(url, version="0.1") as client:
        events = [event async for event in client.stream("streamed 0.1")]
        task = await client.get_task(ids_of(events[0])[0])

    assert [type(event) for event in events] == [
        TaskStatusUpdateEvent,  # 0.1 tells the task a stream opens with as its status
        TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]
    submitted, working, artifact, completed = events
    assert isinstance(submitted, TaskStatusUpdateEvent)
    assert submitted.status.state is TaskState.SUBMITTED and not submitted.final
    assert isinstance(working, TaskStatusUpdateEvent)
    assert working.status.state is TaskState.WORKING and not working.final
    assert isinstance(artifact, TaskArtifactUpdateEvent)
    assert artifact.artifact.parts == [TextPart(text="streamed 0.1")]
    assert artifact.artifact.artifact_id == "0"
    assert isinstance(completed, TaskStatusUpdateEvent)
    assert completed.status.state is TaskState.COMPLETED and completed.final
    assert {ids_of(event) for event in events} == {(task.id, task.context_id)}
    [call, _] = recorder.calls
    assert call.method == "tasks/sendSubscribe"
    assert call.params["id"] == task.id
    assert call.params["sessionId"] == task.context_id  # a new task: the client chose both
    assert call.params["message"]["parts"] == [{"type": "text", "text": "streamed 0.1"}]


async def test_a_stream_continuing_a_task_reads_its_session_first(
    recorded: tuple[str, Recorder],
) -> None:
    url, recorder = recorded
    async with Client(url, version="0.1") as client:
        asked = await client.send("ask for it")
        assert isinstance(asked, Task)
        events = [event async for event in client.stream("Grace", task_id=asked.id)]

    assert {ids_of(event) for event in events} == {(asked.id, asked.context_id)}
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent) and last.status.state is TaskState.COMPLETED
    assert recorder.methods == ["tasks/send", "tasks/get", "tasks/sendSubscribe"]
    assert recorder.calls[2].params["sessionId"] == asked.context_id


async def test_resubscribe_follows_a_running_task() -> None:
    executor = GatedStreamer(chunks=1)
    recorder, serving = served(executor)
    with serving as url:
        async with Client(url, version="0.1") as client:
            async with client.stream("start") as opened:
                first = await anext(opened)
            assert isinstance(first, TaskStatusUpdateEvent)
            await executor.started.wait()

            async with client.resubscribe(first.task_id) as events:
                snapshot = await anext(events)
                executor.release_all()
                rest = [event async for event in events]

    assert isinstance(snapshot, TaskStatusUpdateEvent)
    assert snapshot.status.state is TaskState.WORKING
    assert isinstance(rest[-1], TaskStatusUpdateEvent)
    assert rest[-1].status.state is TaskState.COMPLETED and rest[-1].final
    chunks = [e.artifact.parts for e in rest if isinstance(e, TaskArtifactUpdateEvent)]
    assert chunks == [[TextPart(text="chunk 0")]]
    assert {ids_of(event) for event in [snapshot, *rest]} == {(first.task_id, first.context_id)}
    assert recorder.methods == ["tasks/sendSubscribe", "tasks/get", "tasks/resubscribe"]
    assert recorder.calls[-1].params == {"id": first.task_id}
    assert recorder.calls[-1].version == "0.1"


async def test_a_stream_resumes_after_its_last_event_id() -> None:
    executor = GatedStreamer(chunks=3)
    recorder, serving = served(executor)
    with serving as url:
        async with Client(url, version="0.1") as client:
            async with client.stream("go") as events:
                first = await anext(events)
                await anext(events)  # working
                executor.steps[0].open()
                chunk = await anext(events)
            broke_off_at = events.last_event_id
            executor.release_all()
            await executor.finished.wait()

            assert isinstance(first, TaskStatusUpdateEvent)
            async with client.resubscribe(first.task_id, last_event_id=broke_off_at) as resumed:
                rest = [event async for event in resumed]

    assert broke_off_at is not None
    assert isinstance(chunk, TaskArtifactUpdateEvent)
    assert [type(event) for event in rest] == [
        TaskArtifactUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]
    appended = [e for e in rest if isinstance(e, TaskArtifactUpdateEvent)]
    assert [e.artifact.parts for e in appended] == [
        [TextPart(text="chunk 1")],
        [TextPart(text="chunk 2")],
    ]
    assert {e.artifact.artifact_id for e in appended} == {chunk.artifact.artifact_id}
    assert recorder.methods[-1] == "tasks/resubscribe"


# --- errors ----------------------------------------------------------------------------------


async def test_unknown_task_raises_task_not_found(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    async with Client(url, version="0.1") as client:
        with pytest.raises(TaskNotFound) as caught:
            await client.get_task("no-such-task")
        with pytest.raises(TaskNotFound):
            await client.cancel_task("no-such-task")
        with pytest.raises(TaskNotFound):
            async for _ in client.resubscribe("no-such-task"):
                pass
        with pytest.raises(TaskNotFound):
            await client.get_push_config("no-such-task", "no-such-task")

    assert caught.value.code == -32001
    assert recorder.methods == [
        "tasks/get",
        "tasks/cancel",
        "tasks/get",  # a resubscribe reads the task's session first
        "tasks/pushNotification/get",
    ]


async def test_canceling_a_completed_task_raises_task_not_cancelable(
    recorded: tuple[str, Recorder],
) -> None:
    url, _ = recorded
    async with Client(url, version="0.1") as client:
        task = await client.send("done")
        assert isinstance(task, Task)
        with pytest.raises(TaskNotCancelable) as caught:
            await client.cancel_task(task.id)
    assert caught.value.code == -32002


async def test_a_malformed_0_1_result_is_a_client_error_naming_the_field() -> None:
    task = {"id": "t", "sessionId": "s", "status": {"state": "completed"}}
    bad = {**task, "artifacts": [{"index": 0, "parts": [{"type": "video"}]}]}

    async def answer(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse(legacy_card(str(request.base_url), protocolVersion="0.1"))
        rpc = await request.json()
        return JSONResponse({"jsonrpc": "2.0", "id": rpc["id"], "result": bad})

    fake = Starlette(
        routes=[Route(path, answer, methods=["GET", "POST"]) for path in ("/", *CARD_PATHS)]
    )
    with serve_app(fake) as url, pytest.raises(A2AClientError) as caught:
        async with Client(url) as client:
            await client.get_task("t")

    assert "invalid result: artifacts.0.parts.0.type: 'video' is not a part type" in str(
        caught.value
    )


def test_0_1_results_become_canonical_objects() -> None:
    file = {"name": "a.txt", "mimeType": "text/plain", "bytes": "aGk="}
    wire = {
        "id": "t-1",
        "sessionId": "s-1",
        "status": {
            "state": "input-required",
            "message": {"role": "agent", "parts": [{"type": "text", "text": "more?"}]},
            "timestamp": "2025-01-01T00:00:00Z",
        },
        "artifacts": [
            {"name": "first", "parts": [{"type": "data", "data": {"n": 1}}]},
            {"index": 5, "parts": [{"type": "file", "file": file}], "metadata": {"m": True}},
        ],
        "history": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
        "metadata": {"origin": "0.1"},
    }
    task = v0_1_json.task_from(wire)

    assert (task.id, task.context_id, task.status.state) == ("t-1", "s-1", TaskState.INPUT_REQUIRED)
    assert task.status.message is not None and task.status.message.text == "more?"
    assert task.artifacts is not None
    assert [a.artifact_id for a in task.artifacts] == ["0", "5"]  # place, else the given index
    assert task.artifacts[0].parts == [DataPart(data={"n": 1})]
    assert task.artifacts[1].parts == [FilePart(file=FileWithBytes(**file))]
    assert task.history is not None and task.history[0].text == "hi"
    assert task.metadata == {"origin": "0.1"}

    chunk = {
        "id": "t-1",
        "artifact": {
            "index": 5,
            "parts": [{"type": "text", "text": "x"}],
            "append": True,
            "lastChunk": False,
        },
        "final": False,
    }
    event = v0_1_json.event_from(chunk, "s-1")
    assert isinstance(event, TaskArtifactUpdateEvent)
    assert (event.task_id, event.context_id, event.artifact.artifact_id) == ("t-1", "s-1", "5")
    assert (event.append, event.last_chunk) == (True, False)


# --- choosing 0.1 ----------------------------------------------------------------------------


def legacy_card(url: str, **extra: Any) -> dict[str, Any]:
    """A card as a 0.1 agent writes it, saying so with `protocolVersion`."""
    return {
        "name": "Legacy",
        "description": "Speaks A2A 0.1 only.",
        "url": url,
        "version": "0.0.1",
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": []}],
        **extra,
    }


async def test_a_card_saying_0_1_is_spoken_in_0_1() -> None:
    recorder = Recorder(echo.agent.app())
    with serve_app(recorder) as url:
        recorder.card = legacy_card(url + "/", protocolVersion="0.1")
        async with Client(url) as client:
            task = await client.send("found by its card")
            events = [event async for event in client.stream("and streamed")]
            interface = client.interface

    assert isinstance(task, Task) and texts(task) == ["found by its card"]
    assert isinstance(events[-1], TaskStatusUpdateEvent) and events[-1].final
    assert interface is not None
    assert (interface.transport, interface.protocol_version) == ("JSONRPC", "0.1")
    assert recorder.methods == ["tasks/send", "tasks/sendSubscribe"]


@pytest.mark.parametrize("version", ["0.1", "0.1.0"])
def test_protocol_version_0_1_selects_0_1(version: str) -> None:
    card = AgentCard.model_validate(legacy_card("http://agent.example/", protocolVersion=version))
    chosen = select_interface(card, frozenset(TRANSPORTS))
    assert (chosen.url, chosen.protocol_version) == ("http://agent.example/", version)


def test_a_card_naming_no_version_stays_0_3() -> None:
    card = AgentCard.model_validate(legacy_card("http://agent.example/"))
    assert select_interface(card, frozenset(TRANSPORTS)).protocol_version == "0.3.0"


def test_asking_for_0_1_takes_the_first_json_rpc_interface() -> None:
    interfaces = [
        AgentInterface(
            url="http://agent.example/rest", transport="HTTP+JSON", protocol_version="1.0"
        ),
        AgentInterface(url="http://agent.example/rpc", transport="JSONRPC", protocol_version="1.0"),
    ]
    card = echo.agent.card("http://agent.example/").model_copy(
        update={"supported_interfaces": interfaces}
    )
    chosen = select_interface(card, frozenset(TRANSPORTS), version="0.1")
    assert (chosen.url, chosen.transport, chosen.protocol_version) == (
        "http://agent.example/rpc",
        "JSONRPC",
        "0.1",
    )
    with pytest.raises(A2AClientError, match=r"offers no HTTP\+JSON 0\.1"):
        select_interface(card, frozenset(TRANSPORTS), transport="HTTP+JSON", version="0.1")


def test_the_sync_client_speaks_0_1(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    with SyncClient(url, version="0.1") as client:
        task = client.send("in sync")
        events = list(client.stream("in sync, streamed"))
        assert isinstance(task, Task)
        got = client.get_task(task.id)

    assert got.status.state is TaskState.COMPLETED
    assert isinstance(events[-1], TaskStatusUpdateEvent)
    assert recorder.methods == ["tasks/send", "tasks/sendSubscribe", "tasks/get"]


# --- the command line ------------------------------------------------------------------------


@pytest.mark.processes
def test_accord_send_version_0_1(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    result = subprocess.run(
        accord_command("send", url, "from the shell", "--version", "0.1", "--json"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    task = Task.model_validate_json(result.stdout)
    assert task.status.state is TaskState.COMPLETED and texts(task) == ["from the shell"]
    [call] = recorder.calls
    assert call.method == "tasks/send"
    assert call.params["message"]["parts"] == [{"type": "text", "text": "from the shell"}]


def test_accord_send_stream_version_0_1(recorded: tuple[str, Recorder]) -> None:
    url, recorder = recorded
    result = CliRunner().invoke(
        cli, ["send", url, "shell stream", "--stream", "--version", "0.1", "-v"]
    )

    assert result.exit_code == 0, result.output
    assert "artifact: shell stream" in result.output.splitlines()
    assert "[completed]" in result.output
    assert recorder.methods == ["tasks/sendSubscribe"]
