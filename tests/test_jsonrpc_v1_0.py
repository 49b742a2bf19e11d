"""A2A 1.0 JSON-RPC over real HTTP: every method, ProtoJSON shapes, streams, errors, ListTasks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette

from accord import Agent, AgentExecutor, create_app
from accord.samples import echo
from accord.store import InMemoryTaskStore
from accord.types import (
    Artifact,
    Message,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from agents_for_tests import (
    EXTENDED_CARD,
    GatedStreamer,
    switchboard,
)
from rpc import JSON_HEADERS, Json, RpcClient, connect, request, served
from rpc_v1_0 import (
    assert_valid_v1,
    connect_v1,
    error_info,
    live_v1,
    message_v1,
    send_v1,
    text_v1,
)

SWITCHBOARD = switchboard()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with served(create_app(Agent(SWITCHBOARD, name="Switchboard"))) as url:
        yield url


@pytest.fixture
async def rpc(base_url: str) -> AsyncIterator[RpcClient]:
    async with connect_v1(base_url) as client:
        yield client


def agent_of(executor: AgentExecutor, **card: Any) -> Agent:
    return Agent(executor, name="Test agent", **card)


async def send(rpc: RpcClient, text: str, **kwargs: Any) -> Json:
    """SendMessage of one text message; the unwrapped Task (or Message)."""
    result: Json = await rpc.result("SendMessage", send_v1(text, **kwargs))
    assert_valid_v1("SendMessageResponse", result)
    (member,) = result
    unwrapped: Json = result[member]
    return unwrapped


async def completed_task_id(rpc: RpcClient) -> str:
    task = await send(rpc, "finish this")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id: str = task["id"]
    return task_id


def member_of(result: Json) -> str:
    (member,) = result
    return member


# --- SendMessage -----------------------------------------------------------------------------


async def test_send_message_answers_with_the_task(rpc: RpcClient) -> None:
    message = message_v1("ping")
    response = await rpc.post(
        {"jsonrpc": "2.0", "id": "s-1", "method": "SendMessage", "params": {"message": message}}
    )
    assert response.headers["a2a-version"] == "1.0"
    body = response.json()
    assert body["id"] == "s-1"
    task = body["result"]["task"]
    assert_valid_v1("SendMessageResponse", body["result"])
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [text_v1(a) for a in task["artifacts"]] == ["ping"]
    first = task["history"][0]
    assert (first["messageId"], first["role"]) == (message["messageId"], "ROLE_USER")
    assert (first["taskId"], first["contextId"]) == (task["id"], task["contextId"])


@pytest.mark.parametrize(
    ("length", "expected"),
    [(None, 3), (0, None), (1, 1), (2, 2), (50, 3)],
)
async def test_history_length_trims_history(
    rpc: RpcClient, length: int | None, expected: int | None
) -> None:
    asked = await send(rpc, "ask me")
    configuration = {} if length is None else {"historyLength": length}
    done = await send(rpc, "Ada", task_id=asked["id"], configuration=configuration)
    query = {"id": asked["id"]} if length is None else {"id": asked["id"], "historyLength": length}
    fetched = await rpc.result("GetTask", query)
    for task in (done, fetched):
        if expected is None:
            assert "history" not in task
        else:
            assert len(task["history"]) == expected
            assert text_v1(task["history"][-1]) == "Ada"


async def test_file_and_data_parts_keep_their_shape(rpc: RpcClient) -> None:
    parts = [
        {"text": "look at these"},
        {"raw": "aGVsbG8=", "mediaType": "text/plain", "filename": "hello.txt"},
        {"url": "https://example.com/cat.png", "mediaType": "image/png", "metadata": {"w": 9}},
        {"data": {"rows": [1, 2], "snake_case": True}},
    ]
    task = await send(rpc, "look", parts=parts)
    fetched = await rpc.result("GetTask", {"id": task["id"]})
    assert fetched["history"][0]["parts"] == parts


async def test_output_modes_the_agent_cannot_produce_are_32005(rpc: RpcClient) -> None:
    params = send_v1("hi", configuration={"acceptedOutputModes": ["image/png"]})
    error = await rpc.error("SendMessage", params)
    assert error["code"] == -32005
    assert error_info(error)["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"


async def test_protocol_error_of_the_agent_reaches_the_client_in_1_0_shape(
    rpc: RpcClient,
) -> None:
    error = await rpc.error("SendMessage", send_v1("reject this"))
    assert error["code"] == -32005
    assert error["message"] == "this agent reads no text"
    assert error_info(error)["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"


async def test_bad_params_list_the_fields_in_a_bad_request(rpc: RpcClient) -> None:
    params = {"message": {"role": "ROLE_USER", "parts": [{"text": "a", "data": {}}]}}
    error = await rpc.error("SendMessage", params)
    assert error["code"] == -32602
    assert error["message"].startswith("invalid params for SendMessage: message.parts.0:")
    (bad_request,) = error["data"]
    assert bad_request["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    assert bad_request["fieldViolations"][0]["field"] == "message.parts.0"


# --- GetTask and CancelTask ------------------------------------------------------------------


async def test_get_task_answers_a_1_0_task(rpc: RpcClient) -> None:
    task = await send(rpc, "remember me")
    fetched = await rpc.result("GetTask", {"id": task["id"]})
    assert fetched == task
    assert_valid_v1("Task", fetched)


# --- SendStreamingMessage and SubscribeToTask ------------------------------------------------


async def test_stream_sends_the_task_then_each_change_wrapped(rpc: RpcClient) -> None:
    params = send_v1("stream me")
    async with rpc.stream("SendStreamingMessage", params, request_id="st-1") as stream:
        assert stream.response.headers["a2a-version"] == "1.0"
        events = await stream.rest()
    for event in events:
        assert event.data["id"] == "st-1"
        assert_valid_v1("StreamResponse", event.result)
    assert [member_of(e.result) for e in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]


async def test_stream_refused_by_the_agent_is_the_plain_1_0_error_response(
    rpc: RpcClient,
) -> None:
    """An agent refusing before its first event refuses the stream before it starts: the
    JSON-RPC error response, not an event stream holding it (see docs/versions.md)."""
    headers = {**JSON_HEADERS, "Accept": "text/event-stream"}
    call = request("SendStreamingMessage", send_v1("reject this"), 4)
    response = await rpc.post(call, headers=headers)
    assert response.headers["content-type"].startswith("application/json"), response.text
    answer = response.json()
    assert answer["id"] == 4
    assert answer["error"]["code"] == -32005
    assert error_info(answer["error"])["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"


async def test_0_3_and_1_0_subscribers_of_one_task_see_the_same_events() -> None:
    agent = GatedStreamer(chunks=2)
    app = create_app(agent_of(agent))
    with served(app) as base_url:
        async with connect_v1(base_url) as v1, connect(base_url) as v03:
            task = await send(v1, "go", configuration={"returnImmediately": True})
            await agent.started.wait()
            async with (
                v1.stream("SubscribeToTask", {"id": task["id"]}) as new,
                v03.stream("tasks/resubscribe", {"id": task["id"]}) as old,
            ):
                snapshots = [await new.next(), await old.next()]
                agent.release_all()
                new_events = [snapshots[0], *await new.rest()]
                old_events = [snapshots[1], *await old.rest()]
    assert [e.id for e in new_events] == [e.id for e in old_events]
    members = {"task": "task", "status-update": "statusUpdate", "artifact-update": "artifactUpdate"}
    assert [member_of(e.result) for e in new_events] == [
        members[e.result["kind"]] for e in old_events
    ]
    assert old_events[-1].result["status"]["state"] == "completed"
    assert new_events[-1].result["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


# --- GetExtendedAgentCard --------------------------------------------------------------------


async def test_extended_card_is_a_1_0_agent_card() -> None:
    async with live_v1(agent_of(echo.agent.executor, extended_card=EXTENDED_CARD)) as rpc:
        assert_valid_v1("AgentCard", await rpc.result("GetExtendedAgentCard"))


# --- ListTasks -------------------------------------------------------------------------------


def stored_task(number: int, context_id: str, state: TaskState, *, artifacts: bool = False) -> Task:
    return Task(
        id=f"t{number}",
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=f"2026-01-01T00:00:0{number}.000Z"),
        artifacts=[Artifact(artifact_id="a", parts=[TextPart(text="out")])] if artifacts else None,
        history=[Message.user(f"task {number}"), Message.agent(f"done {number}")],
    )


LISTED = [
    stored_task(1, "ctx-a", TaskState.COMPLETED, artifacts=True),
    stored_task(2, "ctx-a", TaskState.INPUT_REQUIRED),
    stored_task(3, "ctx-b", TaskState.COMPLETED),
    stored_task(4, "ctx-a", TaskState.FAILED),
    stored_task(5, "ctx-a", TaskState.COMPLETED),
]


@pytest.fixture(scope="module")
def listing_url() -> Iterator[str]:
    store = InMemoryTaskStore()

    async def fill() -> None:
        for task in LISTED:
            await store.save(task, 1)

    asyncio.run(fill())
    with served(create_app(agent_of(echo.agent.executor), store=store)) as url:
        yield url


@pytest.fixture
async def lister(listing_url: str) -> AsyncIterator[RpcClient]:
    async with connect_v1(listing_url) as client:
        yield client


async def list_ids(rpc: RpcClient, **params: Any) -> list[str]:
    result = await rpc.result("ListTasks", params)
    assert_valid_v1("ListTasksResponse", result)
    return [task["id"] for task in result["tasks"]]


async def test_list_tasks_newest_first_without_artifacts(lister: RpcClient) -> None:
    result = await lister.result("ListTasks", {})
    assert_valid_v1("ListTasksResponse", result)
    assert [t["id"] for t in result["tasks"]] == ["t5", "t4", "t3", "t2", "t1"]
    assert (result["nextPageToken"], result["pageSize"], result["totalSize"]) == ("", 50, 5)
    assert all("artifacts" not in task for task in result["tasks"])
    assert all(len(task["history"]) == 2 for task in result["tasks"])


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"contextId": "ctx-a"}, ["t5", "t4", "t2", "t1"]),
        ({"status": "TASK_STATE_COMPLETED"}, ["t5", "t3", "t1"]),
        ({"status": 3}, ["t5", "t3", "t1"]),
        ({"status": "TASK_STATE_INPUT_REQUIRED"}, ["t2"]),
        ({"statusTimestampAfter": "2026-01-01T00:00:03Z"}, ["t5", "t4", "t3"]),
        ({"contextId": "ctx-a", "status": "TASK_STATE_COMPLETED"}, ["t5", "t1"]),
        ({"contextId": "ctx-none"}, []),
        ({"status_timestamp_after": "2030-01-01T00:00:00Z"}, []),
    ],
)
async def test_list_tasks_filters(lister: RpcClient, params: Json, expected: list[str]) -> None:
    assert await list_ids(lister, **params) == expected


@pytest.mark.parametrize(
    ("length", "expected"), [(0, None), (1, ["done 1"]), (5, ["task 1", "done 1"])]
)
async def test_list_tasks_trims_history(
    lister: RpcClient, length: int, expected: list[str] | None
) -> None:
    result = await lister.result("ListTasks", {"historyLength": length, "contextId": "ctx-a"})
    oldest = result["tasks"][-1]
    assert oldest["id"] == "t1"
    if expected is None:
        assert "history" not in oldest
    else:
        assert [text_v1(m) for m in oldest["history"]] == expected


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"pageSize": 0}, "pageSize"),
        ({"pageSize": 101}, "pageSize"),
        ({"historyLength": -1}, "historyLength"),
        ({"statusTimestampAfter": "not a time"}, "statusTimestampAfter"),
        ({"status": "TASK_STATE_RUNNING"}, "status"),
        ({"includeArtifacts": "yes please"}, "includeArtifacts"),
    ],
)
async def test_list_tasks_refuses_bad_values(lister: RpcClient, params: Json, field: str) -> None:
    error = await lister.error("ListTasks", params)
    assert error["code"] == -32602
    assert f"ListTasks: {field}:" in error["message"]
    (bad_request,) = error["data"]
    assert [v["field"] for v in bad_request["fieldViolations"]] == [field]


async def test_list_tasks_refuses_a_page_token_it_did_not_issue(lister: RpcClient) -> None:
    error = await lister.error("ListTasks", {"pageToken": "garbage"})
    assert error["code"] == -32602
    assert "pageToken" in error["message"]


# --- framing ---------------------------------------------------------------------------------


async def test_unknown_1_0_method_is_32601(rpc: RpcClient) -> None:
    error = await rpc.error("SendMessages", send_v1("hi"))
    assert error["code"] == -32601


async def test_a_1_0_result_that_cannot_be_serialized_is_32603_not_http_500() -> None:
    app = create_app(echo.agent)

    async def get_task(params: Any, call: Any) -> Starlette:
        return app  # no codec can encode this

    app.state.service.get_task = get_task
    async with live_v1(app) as rpc:
        error = await rpc.error("GetTask", {"id": "t"})
        assert error["code"] == -32603
        assert await completed_task_id(rpc)
