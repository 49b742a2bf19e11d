"""The JSON-RPC server over real HTTP: every A2A error, every method, streams, task lifecycles."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette

from accord import Agent, AgentExecutor, create_app
from accord.errors import ContentTypeNotSupported
from accord.samples import echo
from accord.server.sse import KEEPALIVE, with_keepalive
from accord.store import InMemoryTaskStore
from accord.types import (
    AgentCard,
    Artifact,
    DataPart,
    Task,
    TaskState,
    TaskStatus,
)
from agents_for_tests import (
    EXTENDED_CARD,
    SAFETY_TIMEOUT,
    AsksThenCompletes,
    AsksThenQuits,
    GatedStreamer,
    GoesBackToSubmitted,
    NeverFinishes,
    NotJson,
    Raises,
    ReturnsUnfinished,
    SendsUnserializable,
    Silent,
    Switchboard,
    rejects_before_task,
)
from codec_checks import assert_readable
from rpc import (
    JSON_HEADERS,
    Json,
    RpcClient,
    SseEvent,
    connect,
    live,
    request,
    send_params,
    served,
    text_of,
    user_message,
)
from rpc_v1_0 import message_v1

SWITCHBOARD = Switchboard(
    {
        "reply": echo.message_agent.executor,
        "silent": Silent(),
        "reject": rejects_before_task(ContentTypeNotSupported("this agent reads no text")),
        "raise": Raises(RuntimeError("the model server is down")),
        "unfinished": ReturnsUnfinished(),
        "illegal": GoesBackToSubmitted(),
        "ask": AsksThenCompletes(),
        "quits": AsksThenQuits(),
        "unserializable": SendsUnserializable(),
        "unserializable-reply": SendsUnserializable(as_message=True),
    },
    default=echo.agent.executor,
)
"""One server, many behaviours: the first word of a task's first message picks the agent."""


@pytest.fixture(scope="module")
def app() -> Starlette:
    return create_app(Agent(SWITCHBOARD, name="Switchboard"))


@pytest.fixture(scope="module")
def base_url(app: Starlette) -> Iterator[str]:
    with served(app) as url:
        yield url


@pytest.fixture
async def rpc(base_url: str) -> AsyncIterator[RpcClient]:
    async with connect(base_url) as client:
        yield client


def stored_tasks(app: Starlette) -> int:
    store = app.state.runtime.store
    assert isinstance(store, InMemoryTaskStore)
    return len(store)


def agent_of(executor: AgentExecutor, **card: Any) -> Agent:
    return Agent(executor, name="Test agent", **card)


async def assert_still_serving(rpc: RpcClient) -> None:
    task = await rpc.send("still there?")
    assert task["status"]["state"] == "completed"
    assert text_of(task["artifacts"][0]) == "still there?"


async def completed_task_id(rpc: RpcClient) -> str:
    task = await rpc.send("finish this")
    assert task["status"]["state"] == "completed"
    task_id: str = task["id"]
    return task_id


def status_message_text(task_or_event: dict[str, Any]) -> str:
    return text_of(task_or_event["status"]["message"])


# --- malformed requests ----------------------------------------------------------------------

REQUEST = {"jsonrpc": "2.0", "id": 7, "method": "tasks/get", "params": {"id": "x"}}


def without(key: str) -> dict[str, Any]:
    return {k: v for k, v in REQUEST.items() if k != key}


BAD_REQUESTS: dict[str, tuple[bytes, int, Any]] = {
    # name: (body, code, id in the answer)
    "truncated JSON": (b'{"jsonrpc": "2.0", "id": 1,', -32700, None),
    "empty body": (b"", -32700, None),
    "not UTF-8": (b'{"jsonrpc": "2.0", "id": "\xff\xfe"}', -32700, None),
    "batch array": (json.dumps([REQUEST]).encode(), -32600, None),
    "empty batch": (b"[]", -32600, None),
    "string": (b'"tasks/get"', -32600, None),
    "number": (b"42", -32600, None),
    "null": (b"null", -32600, None),
    "missing id": (json.dumps(without("id")).encode(), -32600, None),
    "object id": (json.dumps({**REQUEST, "id": {"a": 1}}).encode(), -32600, None),
    "float id": (json.dumps({**REQUEST, "id": 1.5}).encode(), -32600, None),
    "bool id": (json.dumps({**REQUEST, "id": True}).encode(), -32600, None),
    "list id": (json.dumps({**REQUEST, "id": [1]}).encode(), -32600, None),
    # The id was read fine, so it is echoed for correlation.
    "missing jsonrpc": (json.dumps(without("jsonrpc")).encode(), -32600, 7),
    "jsonrpc 1.0": (json.dumps({**REQUEST, "jsonrpc": "1.0"}).encode(), -32600, 7),
    "jsonrpc number": (json.dumps({**REQUEST, "jsonrpc": 2.0}).encode(), -32600, 7),
    "missing method": (json.dumps(without("method")).encode(), -32600, 7),
    "method not a string": (json.dumps({**REQUEST, "method": 5}).encode(), -32600, 7),
    "unknown method": (json.dumps({**REQUEST, "method": "tasks/foo"}).encode(), -32601, 7),
    "0.1 method, no message": (json.dumps({**REQUEST, "method": "tasks/send"}).encode(), -32602, 7),
    "params a list": (json.dumps({**REQUEST, "params": ["x"]}).encode(), -32602, 7),
    "params a string": (json.dumps({**REQUEST, "params": "x"}).encode(), -32602, 7),
    "params missing": (json.dumps(without("params")).encode(), -32602, 7),
}


@pytest.mark.parametrize(("body", "code", "answer_id"), BAD_REQUESTS.values(), ids=BAD_REQUESTS)
async def test_bad_request_gets_its_error_and_the_server_keeps_serving(
    rpc: RpcClient, body: bytes, code: int, answer_id: Any
) -> None:
    response = await rpc.post(body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    answer = response.json()
    assert answer == {"jsonrpc": "2.0", "id": answer_id, "error": answer["error"]}
    assert answer["error"]["code"] == code
    assert answer["error"]["message"]
    await assert_still_serving(rpc)


async def test_unknown_method_echoes_a_string_id(rpc: RpcClient) -> None:
    error = await rpc.error("message/sendd", {}, request_id="req-1")
    assert error["code"] == -32601
    assert "message/sendd" in error["message"]


async def test_null_id_is_answered_with_null(rpc: RpcClient) -> None:
    body = await rpc.call("tasks/get", {"id": "nope"}, request_id=None)
    assert body["id"] is None
    assert body["error"]["code"] == -32001


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "application/jsonx"]
)
async def test_wrong_content_type_is_415_with_a_jsonrpc_body(
    rpc: RpcClient, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    content = json.dumps(REQUEST).encode()
    response = await rpc.http.post("/", content=content, headers=headers)
    assert response.status_code == 415
    answer = response.json()
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    assert "Content-Type" in answer["error"]["message"]
    await assert_still_serving(rpc)


async def test_json_content_type_with_parameters_is_accepted(rpc: RpcClient) -> None:
    response = await rpc.post(
        {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": send_params("x")},
        headers={"Content-Type": "Application/JSON; charset=utf-8"},
    )
    assert response.json()["result"]["status"]["state"] == "completed"


# --- body size -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_limit_url() -> Iterator[str]:
    with served(create_app(echo.agent, max_body_bytes=1024)) as url:
        yield url


def padded_request(size: int) -> bytes:
    """A valid message/send request of exactly `size` bytes."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": send_params("")}
    bare = len(json.dumps(body).encode())
    body["params"]["message"]["parts"][0]["text"] = "x" * (size - bare)
    encoded = json.dumps(body).encode()
    assert len(encoded) == size
    return encoded


async def test_body_at_the_limit_is_served(small_limit_url: str) -> None:
    async with connect(small_limit_url) as rpc:
        response = await rpc.post(padded_request(1024))
    assert response.json()["result"]["status"]["state"] == "completed"


async def test_body_over_the_configured_limit_is_413(small_limit_url: str) -> None:
    async with connect(small_limit_url) as rpc:
        response = await rpc.post(padded_request(1025))
        assert response.status_code == 413
        answer = response.json()
        assert (answer["id"], answer["error"]["code"]) == (None, -32600)
        assert "1024" in answer["error"]["message"]
        await assert_still_serving(rpc)


async def test_chunked_body_over_the_limit_is_413(small_limit_url: str) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        body = padded_request(4096)
        for start in range(0, len(body), 512):
            yield body[start : start + 512]

    async with connect(small_limit_url) as rpc:
        response = await rpc.http.post("/", content=chunks(), headers=JSON_HEADERS)
        assert "content-length" not in response.request.headers
        assert response.status_code == 413
        assert response.json()["error"]["code"] == -32600
        await assert_still_serving(rpc)


async def test_body_just_over_the_default_limit_is_413() -> None:
    async with live(echo.agent) as rpc:
        response = await rpc.post(padded_request(10 * 1024 * 1024 + 1))
        assert response.status_code == 413
        assert response.json()["error"]["code"] == -32600
        await assert_still_serving(rpc)


# --- invalid params --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("message/send", {"message": "hello"}, "message"),
        ("message/send", {"configuration": {}}, "message"),
        ("message/send", {"message": {**user_message("x"), "messageId": None}}, "messageId"),
        ("message/send", {"message": {"role": "user", "parts": []}}, "messageId"),
        ("message/send", {"message": {**user_message("x"), "role": "robot"}}, "role"),
        ("message/send", {"message": {**user_message("x"), "parts": [{"kind": "x"}]}}, "parts"),
        ("message/send", {"message": {**user_message("x"), "parts": [{"kind": "text"}]}}, "text"),
        (
            "message/send",
            {**send_params("x"), "configuration": {"historyLength": -1}},
            "historyLength",
        ),
        ("message/stream", {"message": 1}, "message"),
        ("tasks/get", {}, "id"),
        ("tasks/get", {"id": 5}, "id"),
        ("tasks/get", {"id": "x", "historyLength": "all"}, "historyLength"),
        ("tasks/cancel", {"id": None}, "id"),
        ("tasks/resubscribe", {"taskId": "x"}, "id"),
    ],
)
async def test_invalid_params_name_the_field(
    rpc: RpcClient, method: str, params: dict[str, Any], field: str
) -> None:
    error = await rpc.error(method, params)
    assert error["code"] == -32602
    assert field in error["message"]
    assert error["message"].startswith(f"invalid params for {method}: ")
    assert error["message"].endswith(" (read as A2A 0.3)")  # the version's shapes assumed
    assert_readable(error)
    problems = error["data"]
    assert isinstance(problems, list) and problems
    assert all(set(p) == {"field", "message"} for p in problems)
    assert any(field in p["field"] for p in problems)


A_TXT = "https://files.example/a.txt"


async def test_a_send_whose_parts_leave_out_kind_is_served(rpc: RpcClient) -> None:
    """Parts whose fields say what they are, in 0.3's shape or 1.0's (as some clients send
    them to the 0.3 methods), are read as the parts they are."""
    message = {"messageId": "m-kindless", "role": "user"}  # no kind here either
    message["parts"] = [
        {"text": "hi"},
        {"data": {"a": 1}},
        {"file": {"uri": "https://files.example/b.txt"}},
        {"url": A_TXT, "filename": "a.txt", "mediaType": "text/plain"},
        {"raw": "Ynl0ZXM=", "metadata": {"k": "v"}},
    ]
    task = await rpc.result("message/send", {"message": message})
    assert task["status"]["state"] == "completed"
    assert task["history"][0]["parts"] == [
        {"kind": "text", "text": "hi"},
        {"kind": "data", "data": {"a": 1}},
        {"kind": "file", "file": {"uri": "https://files.example/b.txt"}},
        {
            "kind": "file",
            "file": {
                "uri": "https://files.example/a.txt",
                "name": "a.txt",
                "mimeType": "text/plain",
            },
        },
        {"kind": "file", "file": {"bytes": "Ynl0ZXM="}, "metadata": {"k": "v"}},
    ]


async def test_every_problem_is_listed(rpc: RpcClient) -> None:
    error = await rpc.error("message/send", {"message": {"kind": "message"}})
    fields = {p["field"] for p in error["data"]}
    assert {"message.messageId", "message.role", "message.parts"} <= fields
    assert "more" in error["message"]


async def test_method_without_params_refuses_params(rpc: RpcClient) -> None:
    error = await rpc.error("agent/getAuthenticatedExtendedCard", ["x"])
    assert error["code"] == -32602


async def test_unknown_fields_in_params_are_ignored(rpc: RpcClient) -> None:
    params = send_params("tolerant", futureField={"a": 1})
    params["configuration"] = {"blocking": True, "someNewOption": 3}
    params["alsoUnknown"] = True
    params["message"]["parts"][0]["fancy"] = "yes"
    task = await rpc.result("message/send", params)
    assert task["status"]["state"] == "completed"
    assert "futureField" not in task["history"][0]
    fetched = await rpc.get_task(task["id"], unknownFilter="x")
    assert fetched["id"] == task["id"]


# --- A2A errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["message/send", "message/stream"])
async def test_output_modes_the_agent_cannot_produce_are_32005(
    rpc: RpcClient, app: Starlette, method: str
) -> None:
    before = stored_tasks(app)
    params = send_params("hi", configuration={"acceptedOutputModes": ["image/png", "audio/*"]})
    error = await rpc.error(method, params)
    assert error["code"] == -32005
    assert "image/png" in error["message"]
    assert stored_tasks(app) == before, "the agent was never run"


@pytest.mark.parametrize(
    "modes", [["text/plain"], ["text/*"], ["*/*"], ["image/png", "text/plain"]]
)
async def test_output_modes_the_agent_can_produce_are_served(
    rpc: RpcClient, modes: list[str]
) -> None:
    task = await rpc.send("hi", configuration={"acceptedOutputModes": modes})
    assert task["status"]["state"] == "completed"


async def test_agent_reply_that_cannot_be_serialized_is_32006(rpc: RpcClient) -> None:
    error = await rpc.error("message/send", send_params("unserializable-reply"))
    assert error["code"] == -32006
    await assert_still_serving(rpc)


async def test_agent_that_replies_nothing_is_32006(rpc: RpcClient, app: Starlette) -> None:
    before = stored_tasks(app)
    error = await rpc.error("message/send", send_params("silent please"))
    assert error["code"] == -32006
    assert stored_tasks(app) == before
    await assert_still_serving(rpc)


async def test_protocol_error_of_the_agent_reaches_the_client_and_no_task_is_stored(
    rpc: RpcClient, app: Starlette
) -> None:
    before = stored_tasks(app)
    error = await rpc.error("message/send", send_params("reject this"))
    assert error == {"code": -32005, "message": "this agent reads no text"}
    assert stored_tasks(app) == before


async def test_protocol_error_of_the_agent_ends_a_stream_with_that_error(
    rpc: RpcClient,
) -> None:
    async with rpc.stream("message/stream", send_params("reject this"), request_id=4) as stream:
        events = await stream.rest()
    assert len(events) == 1
    assert events[0].data["id"] == 4
    assert events[0].data["error"]["code"] == -32005


async def test_extended_card_is_returned_when_configured() -> None:
    async with live(agent_of(echo.agent.executor, extended_card=EXTENDED_CARD)) as rpc:
        card = AgentCard.model_validate(await rpc.result("agent/getAuthenticatedExtendedCard"))
        public = (await rpc.http.get("/.well-known/agent-card.json")).json()
    assert card.name == EXTENDED_CARD.name
    assert [s.id for s in card.skills] == ["audit"]
    assert card.url == rpc.base_url + "/"
    assert public["supportsAuthenticatedExtendedCard"] is True
    assert public["skills"] == []


# --- message/send ----------------------------------------------------------------------------


async def test_send_blocks_until_the_task_completes(rpc: RpcClient) -> None:
    message = user_message("ping")
    task = await rpc.result("message/send", {"message": message}, request_id="s-1")
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    assert task["status"]["timestamp"]
    assert [text_of(a) for a in task["artifacts"]] == ["ping"]
    assert task["history"][0]["messageId"] == message["messageId"]
    assert task["history"][0]["taskId"] == task["id"]
    assert task["history"][0]["contextId"] == task["contextId"]
    assert Task.model_validate(task).id == task["id"]


async def test_message_mode_agent_answers_with_a_message(rpc: RpcClient, app: Starlette) -> None:
    before = stored_tasks(app)
    reply = await rpc.send("reply to me", context_id="ctx-42")
    assert reply["kind"] == "message"
    assert reply["role"] == "agent"
    assert text_of(reply) == "reply to me"
    assert reply["contextId"] == "ctx-42"
    assert stored_tasks(app) == before


async def test_reference_task_ids_are_kept_in_history(rpc: RpcClient) -> None:
    earlier = await completed_task_id(rpc)
    task = await rpc.send("follow-up", referenceTaskIds=[earlier])
    assert task["history"][0]["referenceTaskIds"] == [earlier]
    fetched = await rpc.get_task(task["id"])
    assert fetched["history"][0]["referenceTaskIds"] == [earlier]


@pytest.mark.parametrize(
    ("length", "expected"),
    [
        (None, ["user", "agent", "user"]),
        (0, None),
        (1, ["user"]),
        (2, ["agent", "user"]),
        (50, ["user", "agent", "user"]),
    ],
)
async def test_history_length_trims_history(
    rpc: RpcClient, length: int | None, expected: list[str] | None
) -> None:
    asked = await rpc.send("ask me")
    configuration = {} if length is None else {"historyLength": length}
    done = await rpc.send("Ada", task_id=asked["id"], configuration=configuration)
    query = {} if length is None else {"historyLength": length}
    fetched = await rpc.get_task(asked["id"], **query)
    for task in (done, fetched):
        if expected is None:
            assert "history" not in task
        else:
            assert [m["role"] for m in task["history"]] == expected
            assert text_of(task["history"][-1]) == "Ada"
    full = await rpc.get_task(asked["id"])
    assert len(full["history"]) == 3, "trimming an answer never trims the task"


# --- message/stream --------------------------------------------------------------------------


async def test_each_stream_event_is_a_response_to_the_request(rpc: RpcClient) -> None:
    async with rpc.stream("message/stream", send_params("stream me"), request_id="st-1") as stream:
        assert stream.response.headers["content-type"].startswith("text/event-stream")
        events = await stream.rest()
    assert len(events) == 4
    for event in events:
        assert event.data["jsonrpc"] == "2.0"
        assert event.data["id"] == "st-1"
        assert "result" in event.data


async def test_stream_of_a_message_reply_answers_the_request(rpc: RpcClient) -> None:
    async with rpc.stream("message/stream", send_params("reply now"), request_id=9) as stream:
        events = await stream.rest()
    assert [(e.data["id"], e.result["kind"]) for e in events] == [(9, "message")]


async def test_stream_of_a_failing_agent_ends_with_the_failure(rpc: RpcClient) -> None:
    async with rpc.stream("message/stream", send_params("raise now")) as stream:
        events = await stream.rest()
    last = events[-1].result
    assert last["final"] is True
    assert last["status"]["state"] == "failed"
    assert "The agent failed (reference " in status_message_text(last)


# --- cancel and resubscribe ------------------------------------------------------------------


async def test_resubscribe_answers_the_request_and_goes_on_numbering_the_events() -> None:
    agent = GatedStreamer(chunks=2)
    async with live(agent_of(agent)) as rpc:
        task = await rpc.send("go", configuration={"blocking": False})
        await agent.started.wait()
        async with rpc.stream("tasks/resubscribe", {"id": task["id"]}, request_id=5) as stream:
            first = await stream.next()
            agent.release_all()
            rest = await stream.rest()
    assert [e.data["id"] for e in (first, *rest)] == [5, 5, 5, 5]
    assert first.id is not None
    assert [e.id for e in rest] == list(range(first.id + 1, first.id + 4))


# --- runtime semantics seen over HTTP --------------------------------------------------------


async def test_all_subscribers_see_the_same_events_in_the_same_order() -> None:
    agent = GatedStreamer(chunks=3)
    async with (
        live(agent_of(agent)) as rpc,
        rpc.stream("message/stream", send_params("fan out")) as original,
    ):
        task = (await original.next()).result
        working = await original.next()
        assert working.result["status"]["state"] == "working"
        watch = {"id": task["id"]}
        async with (
            rpc.stream("tasks/resubscribe", watch, request_id=2) as second,
            rpc.stream("tasks/resubscribe", watch, request_id=3) as third,
        ):
            snapshots = [await second.next(), await third.next()]
            agent.release_all()
            streams = [await s.rest() for s in (original, second, third)]
    assert [s.id for s in snapshots] == [working.id, working.id]

    def seen(events: list[SseEvent]) -> list[tuple[int | None, Any]]:
        return [(e.id, e.data["result"]) for e in events]

    assert seen(streams[0]) == seen(streams[1]) == seen(streams[2])
    assert len(streams[0]) == 4
    assert streams[0][-1].result["status"]["state"] == "completed"


async def test_client_disconnecting_mid_stream_does_not_cancel_the_agent() -> None:
    agent = GatedStreamer(chunks=2)
    async with live(agent_of(agent)) as rpc:
        async with rpc.stream("message/stream", send_params("keep going")) as stream:
            task = (await stream.next()).result
            await agent.started.wait()
        # The connection is gone; the agent carries on when it may.
        agent.release_all()
        await agent.finished.wait()
        done = await rpc.get_task(task["id"])
        assert done["status"]["state"] == "completed"
        assert [text_of(a) for a in done["artifacts"]] == ["chunk 0\nchunk 1"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("raise now", "The agent failed (reference "),
        ("unfinished business", "without finishing"),
        ("illegal move", "submitted"),
        ("unserializable result", "cannot be serialized"),
    ],
)
async def test_misbehaving_agent_fails_its_task_and_the_server_keeps_serving(
    rpc: RpcClient, text: str, reason: str
) -> None:
    task = await rpc.send(text)
    assert task["status"]["state"] == "failed"
    assert reason in status_message_text(task)
    fetched = await rpc.get_task(task["id"])
    assert fetched["status"]["state"] == "failed"
    await assert_still_serving(rpc)


async def test_follow_up_the_agent_ignores_fails_the_task_instead_of_hanging(
    rpc: RpcClient,
) -> None:
    asked = await rpc.send("quits after asking")
    assert asked["status"]["state"] == "input-required"
    answered = await rpc.send("my answer", task_id=asked["id"])
    assert answered["status"]["state"] == "failed"
    assert "without finishing" in status_message_text(answered)


async def test_a_running_task_takes_no_second_message() -> None:
    agent = NeverFinishes()
    async with live(agent_of(agent)) as rpc:
        task = await rpc.send("work", configuration={"blocking": False})
        error = await rpc.error("message/send", send_params("more", task_id=task["id"]))
        assert error["code"] == -32004
        await rpc.result("tasks/cancel", {"id": task["id"]})


async def test_result_that_cannot_be_serialized_is_32603_not_http_500() -> None:
    app = create_app(echo.agent)
    broken = Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.COMPLETED),
        artifacts=[Artifact(artifact_id="a", parts=[DataPart(data={"x": NotJson()})])],
    )

    async def get_task(params: Any, call: Any) -> Task:
        return broken

    app.state.service.get_task = get_task
    async with live(app) as rpc:
        error = await rpc.error("tasks/get", {"id": "t"})
        assert error["code"] == -32603
        await assert_still_serving(rpc)


async def test_keepalive_stream_closed_while_idle_closes_its_source() -> None:
    source_closed = asyncio.Event()

    async def idle_source() -> AsyncIterator[bytes]:
        try:
            await asyncio.Event().wait()
            yield b"never"
        finally:
            source_closed.set()

    stream = with_keepalive(idle_source(), interval=0.001)
    assert await anext(stream) == KEEPALIVE
    await stream.aclose()  # what the server does when the client goes away
    async with asyncio.timeout(SAFETY_TIMEOUT):
        await source_closed.wait()


# --- a streaming method refused before it starts ---------------------------------------------

EVENT_REFUSALS = [  # 0.1 and 0.3: a streaming method answers with an event stream
    ("tasks/resubscribe", {"id": "no-such-task"}, "0.3", -32001),
    ("message/stream", {"message": user_message("hi", task_id="no-such-task")}, "0.3", -32001),
    ("tasks/sendSubscribe", {"id": "t", "message": {"role": "user", "parts": []}}, "0.1", -32602),
]
JSON_REFUSALS = [  # 1.0: the plain JSON-RPC error response, as the official SDKs answer
    ("SubscribeToTask", {"id": "no-such-task"}, "1.0", -32001),
    (
        "SendStreamingMessage",
        {"message": {"messageId": "m", "parts": [], "role": "ROLE_USER"}},
        "1.0",
        -32602,
    ),
]
ACCEPTING_EVENTS = ["text/event-stream", "application/json, text/event-stream"]


def _refusal_headers(version: str, accept: str | None = None) -> dict[str, str]:
    named = {"A2A-Version": version} if version == "1.0" else {}  # 0.x: the method says
    return {**JSON_HEADERS, **named, **({"Accept": accept} if accept else {})}


@pytest.mark.parametrize(("method", "params", "version", "code"), EVENT_REFUSALS)
@pytest.mark.parametrize("accept", ACCEPTING_EVENTS)
async def test_an_early_error_of_a_0_x_stream_is_an_event_for_clients_accepting_one(
    rpc: RpcClient, method: str, params: Json, version: str, code: int, accept: str
) -> None:
    response = await rpc.post(request(method, params, 7), headers=_refusal_headers(version, accept))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["a2a-version"] == version
    assert response.text.startswith("data: ") and response.text.endswith("\n\n")
    answer = json.loads(response.text.removeprefix("data: "))
    assert (answer["jsonrpc"], answer["id"], answer["error"]["code"]) == ("2.0", 7, code)


@pytest.mark.parametrize(("method", "params", "version", "code"), JSON_REFUSALS)
@pytest.mark.parametrize("accept", ACCEPTING_EVENTS)
async def test_an_early_error_of_a_1_0_stream_is_the_plain_error_response(
    rpc: RpcClient, method: str, params: Json, version: str, code: int, accept: str
) -> None:
    response = await rpc.post(request(method, params, 7), headers=_refusal_headers(version, accept))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["a2a-version"] == version
    answer = response.json()
    assert (answer["jsonrpc"], answer["id"], answer["error"]["code"]) == ("2.0", 7, code)


@pytest.mark.parametrize(("method", "params", "version", "code"), EVENT_REFUSALS + JSON_REFUSALS)
async def test_an_early_error_of_a_stream_is_json_for_clients_not_accepting_events(
    rpc: RpcClient, method: str, params: Json, version: str, code: int
) -> None:
    response = await rpc.post(request(method, params, 7), headers=_refusal_headers(version))
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"]["code"] == code


async def test_streaming_on_a_finished_task_in_1_0_is_unsupported_operation_as_json(
    rpc: RpcClient,
) -> None:
    """Subscribing to a finished task (the conformance suite's STREAM-SUB-003) and streaming
    a message to one are refused before the first event: plain JSON, -32004, in 1.0."""
    headers = _refusal_headers("1.0", "text/event-stream")
    sent = await rpc.post(
        request("SendMessage", {"message": message_v1("hello")}), headers=_refusal_headers("1.0")
    )
    task = sent.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    more = message_v1("more", task_id=task["id"], context_id=task["contextId"])
    for method, params in (
        ("SubscribeToTask", {"id": task["id"]}),
        ("SendStreamingMessage", {"message": more}),
    ):
        response = await rpc.post(request(method, params, 3), headers=headers)
        assert response.headers["content-type"].startswith("application/json"), method
        assert response.json()["error"]["code"] == -32004, response.text
