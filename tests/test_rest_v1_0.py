"""A2A 1.0 over HTTP+JSON on real HTTP: every route, tenants, streams, versions, Status errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette

from accord import Agent, AgentExecutor, create_app
from accord.errors import TaskNotFound
from accord.runtime import EventRecord
from accord.samples import echo
from accord.server.pipeline import Call, Proceed, RequestPipeline
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
    Silent,
    switchboard,
)
from rest import A2A_JSON, RestClient, connect_rest, live_rest, reason, status_error, violations
from rpc import Json, connect, served
from rpc_v1_0 import assert_valid_v1, message_v1, send_v1, text_v1

SWITCHBOARD = switchboard(silent=Silent())
HOOK = "https://client.example.com/hook"


def agent_of(executor: AgentExecutor, **card: Any) -> Agent:
    return Agent(executor, name="Test agent", **card)


@pytest.fixture(scope="module")
def app() -> Starlette:
    return create_app(agent_of(SWITCHBOARD, push_notifications=True, extended_card=EXTENDED_CARD))


@pytest.fixture(scope="module")
def base_url(app: Starlette) -> Iterator[str]:
    with served(app) as url:
        yield url


@pytest.fixture
async def rest(base_url: str) -> AsyncIterator[RestClient]:
    async with connect_rest(base_url) as client:
        yield client


async def send(rest: RestClient, text: str, prefix: str = "", **kwargs: Any) -> Json:
    """POST /message:send of one text message; the unwrapped Task (or Message)."""
    result = await rest.ok("POST", f"{prefix}/message:send", send_v1(text, **kwargs))
    assert_valid_v1("SendMessageResponse", result)
    (member,) = result
    unwrapped: Json = result[member]
    return unwrapped


async def completed_task_id(rest: RestClient) -> str:
    task = await send(rest, "finish this")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id: str = task["id"]
    return task_id


def member_of(result: Json) -> str:
    (member,) = result
    return member


# --- POST /message:send ----------------------------------------------------------------------


async def test_send_answers_with_the_task(rest: RestClient) -> None:
    message = message_v1("ping")
    result = await rest.ok("POST", "/message:send", {"message": message})
    assert_valid_v1("SendMessageResponse", result)
    task = result["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [text_v1(a) for a in task["artifacts"]] == ["ping"]
    assert task["history"][0]["messageId"] == message["messageId"]


@pytest.mark.parametrize("content_type", ["application/json", A2A_JSON, "application/json; x=1"])
async def test_send_reads_either_json_media_type(rest: RestClient, content_type: str) -> None:
    response = await rest.http.post(
        "/message:send", json=send_v1("typed"), headers={"Content-Type": content_type}
    )
    assert response.status_code == 200, response.text
    assert response.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            {"message": {"role": "ROLE_USER", "parts": [{"text": "a", "data": {}}]}},
            "message.parts.0",
        ),
        ({"message": {"messageId": "m", "role": "ROLE_BOSS", "parts": []}}, "message.role"),
        ({"configuration": {}}, "message"),
        (
            {"message": message_v1("hi"), "configuration": {"historyLength": -1}},
            "configuration.historyLength",
        ),
    ],
)
async def test_bad_requests_are_400_with_the_fields(
    rest: RestClient, body: Json, field: str
) -> None:
    error = await rest.error("POST", "/message:send", body, status=400)
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"].startswith(f"invalid SendMessage request: {field}")
    assert violations(error) == [field]


async def test_output_modes_the_agent_cannot_produce_are_400(rest: RestClient) -> None:
    body = send_v1("hi", configuration={"acceptedOutputModes": ["image/png"]})
    error = await rest.error("POST", "/message:send", body, status=400)
    assert (error["status"], reason(error)) == ("INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED")


async def test_protocol_error_of_the_agent_gets_its_http_status(rest: RestClient) -> None:
    error = await rest.error("POST", "/message:send", send_v1("reject this"), status=400)
    assert error["message"] == "this agent reads no text"
    assert reason(error) == "CONTENT_TYPE_NOT_SUPPORTED"


@pytest.mark.parametrize("path", ["/message:send", "/message:stream"])
async def test_an_agent_that_answers_nothing_is_500(rest: RestClient, path: str) -> None:
    error = await rest.error("POST", path, send_v1("silent please"), status=500)
    assert (error["status"], reason(error)) == ("INTERNAL", "INVALID_AGENT_RESPONSE")


# --- GET /tasks/{id} and POST /tasks/{id}:cancel ---------------------------------------------


@pytest.mark.parametrize(("length", "expected"), [(None, 3), ("0", None), ("1", 1), ("", 3)])
async def test_history_length_query_trims_history(
    rest: RestClient, length: str | None, expected: int | None
) -> None:
    asked = await send(rest, "ask me")
    await send(rest, "Ada", task_id=asked["id"])
    params = None if length is None else {"historyLength": length}
    task = await rest.ok("GET", f"/tasks/{asked['id']}", params=params)
    if expected is None:
        assert "history" not in task
    else:
        assert len(task["history"]) == expected
        assert text_v1(task["history"][-1]) == "Ada"


async def test_a_history_length_that_is_no_number_is_400(rest: RestClient) -> None:
    task_id = await completed_task_id(rest)
    error = await rest.error(
        "GET", f"/tasks/{task_id}", params={"historyLength": "all"}, status=400
    )
    assert violations(error) == ["historyLength"]


@pytest.mark.parametrize(
    ("verb", "path"),
    [
        ("POST", "/tasks/no-such-task:subscribe"),
        ("GET", "/tasks/no-such-task/pushNotificationConfigs"),
    ],
)
async def test_an_unknown_task_is_404(rest: RestClient, verb: str, path: str) -> None:
    error = await rest.error(verb, path, status=404)
    assert (error["status"], reason(error)) == ("NOT_FOUND", "TASK_NOT_FOUND")
    assert "no-such-task" in error["message"]


async def test_cancel_takes_an_empty_or_json_body(rest: RestClient) -> None:
    task_id = await completed_task_id(rest)
    for body in (None, {}, {"id": task_id, "metadata": {"why": "test"}}):
        error = await rest.error("POST", f"/tasks/{task_id}:cancel", body, status=400)
        assert (error["status"], reason(error)) == ("FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")


# --- GET /tasks ------------------------------------------------------------------------------


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
async def lister(listing_url: str) -> AsyncIterator[RestClient]:
    async with connect_rest(listing_url) as client:
        yield client


async def list_ids(rest: RestClient, **params: str) -> list[str]:
    result = await rest.ok("GET", "/tasks", params=params)
    assert_valid_v1("ListTasksResponse", result)
    return [task["id"] for task in result["tasks"]]


async def test_list_tasks_newest_first_without_artifacts(lister: RestClient) -> None:
    result = await lister.ok("GET", "/tasks")
    assert_valid_v1("ListTasksResponse", result)
    assert [t["id"] for t in result["tasks"]] == ["t5", "t4", "t3", "t2", "t1"]
    assert (result["nextPageToken"], result["pageSize"], result["totalSize"]) == ("", 50, 5)
    assert all("artifacts" not in task for task in result["tasks"])


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"contextId": "ctx-a"}, ["t5", "t4", "t2", "t1"]),
        ({"status": "TASK_STATE_COMPLETED"}, ["t5", "t3", "t1"]),
        ({"status": "TASK_STATE_INPUT_REQUIRED"}, ["t2"]),
        ({"statusTimestampAfter": "2026-01-01T00:00:03Z"}, ["t5", "t4", "t3"]),
        ({"contextId": "ctx-a", "status": "TASK_STATE_COMPLETED"}, ["t5", "t1"]),
        ({"contextId": "ctx-none"}, []),
        ({"context_id": "ctx-b"}, ["t3"]),
        ({"pageToken": ""}, ["t5", "t4", "t3", "t2", "t1"]),
    ],
)
async def test_list_tasks_filters(
    lister: RestClient, params: dict[str, str], expected: list[str]
) -> None:
    assert await list_ids(lister, **params) == expected


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"pageSize": "0"}, "pageSize"),
        ({"pageSize": "101"}, "pageSize"),
        ({"pageSize": "ten"}, "pageSize"),
        ({"historyLength": "-1"}, "historyLength"),
        ({"statusTimestampAfter": "not a time"}, "statusTimestampAfter"),
        ({"status": "TASK_STATE_RUNNING"}, "status"),
        ({"includeArtifacts": "yes please"}, "includeArtifacts"),
    ],
)
async def test_list_tasks_refuses_bad_values(
    lister: RestClient, params: dict[str, str], field: str
) -> None:
    error = await lister.error("GET", "/tasks", params=params, status=400)
    assert error["status"] == "INVALID_ARGUMENT"
    assert error["message"].startswith(f"invalid ListTasks request: {field}:")
    assert violations(error) == [field]


# --- POST /message:stream and /tasks/{id}:subscribe ------------------------------------------


async def test_each_stream_event_is_a_1_0_stream_response(rest: RestClient) -> None:
    async with rest.stream("POST", "/message:stream", send_v1("stream me")) as stream:
        events = await stream.rest()
    assert len(events) == 4
    for event in events:
        assert_valid_v1("StreamResponse", event.data)


async def test_stream_refused_before_its_first_event_is_an_http_error(rest: RestClient) -> None:
    error = await rest.error("POST", "/message:stream", send_v1("reject this"), status=400)
    assert reason(error) == "CONTENT_TYPE_NOT_SUPPORTED"


@pytest.mark.parametrize("verb", ["GET", "POST"])
async def test_subscribe_sends_the_task_first_then_live_events(verb: str) -> None:
    agent = GatedStreamer(chunks=2)
    async with live_rest(agent_of(agent)) as rest:
        task = await send(rest, "go", configuration={"returnImmediately": True})
        await agent.started.wait()
        async with rest.stream(verb, f"/tasks/{task['id']}:subscribe") as stream:
            first = await stream.next()
            agent.release_all()
            rest_of_it = await stream.rest()
    assert first.data["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert [member_of(e.data) for e in rest_of_it] == [
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    for event in (first, *rest_of_it):
        assert_valid_v1("StreamResponse", event.data)


async def test_a_bad_last_event_id_is_400(rest: RestClient) -> None:
    task_id = await completed_task_id(rest)
    headers = {"Last-Event-ID": "latest"}
    error = await rest.error("GET", f"/tasks/{task_id}:subscribe", headers=headers, status=400)
    assert "Last-Event-ID" in error["message"]


# --- push notification configs ---------------------------------------------------------------


async def test_push_configs_create_get_list_delete(rest: RestClient) -> None:
    task_id = await completed_task_id(rest)
    configs = f"/tasks/{task_id}/pushNotificationConfigs"
    body = {"url": HOOK, "token": "tok", "authentication": {"scheme": "Bearer", "credentials": "s"}}
    created = await rest.ok("POST", configs, body)
    assert_valid_v1("TaskPushNotificationConfig", created)
    assert created == {**body, "taskId": task_id, "id": created["id"]} and created["id"]
    other = await rest.ok("POST", configs, {"id": "other:1", "url": HOOK})
    assert other == {"taskId": task_id, "id": "other:1", "url": HOOK}

    assert await rest.ok("GET", f"{configs}/{created['id']}") == created
    assert await rest.ok("GET", f"{configs}/other:1") == other
    listed = await rest.ok("GET", configs)
    assert_valid_v1("ListTaskPushNotificationConfigsResponse", listed)
    assert listed == {"configs": [created, other], "nextPageToken": ""}

    assert await rest.ok("DELETE", f"{configs}/{created['id']}") == {}
    assert await rest.ok("DELETE", f"{configs}/{created['id']}") == {}, "idempotent"
    assert (await rest.ok("GET", configs))["configs"] == [other]
    error = await rest.error("GET", f"{configs}/{created['id']}", status=404)
    assert reason(error) == "TASK_NOT_FOUND"


async def test_a_push_config_needs_a_url(rest: RestClient) -> None:
    task_id = await completed_task_id(rest)
    error = await rest.error("POST", f"/tasks/{task_id}/pushNotificationConfigs", {}, status=400)
    assert violations(error) == ["url"]


# --- GET /extendedAgentCard ------------------------------------------------------------------


# --- tenants ---------------------------------------------------------------------------------


@pytest.fixture
def tenants(app: Starlette) -> Iterator[list[str | None]]:
    """The tenant of every operation the pipeline runs while the test runs (seen by a hook)."""
    pipeline: RequestPipeline = app.state.pipeline
    seen: list[str | None] = []

    async def watch(call: Call, proceed: Proceed) -> Any:
        seen.append(call.context.tenant)
        return await proceed()

    pipeline.add_hook(watch)
    yield seen
    pipeline.hooks.remove(watch)


async def test_every_route_answers_under_a_tenant(
    rest: RestClient, tenants: list[str | None]
) -> None:
    task = await send(rest, "tenanted", prefix="/acme")
    task_id = task["id"]
    assert (await rest.ok("GET", f"/acme/tasks/{task_id}"))["id"] == task_id
    assert task_id in [t["id"] for t in (await rest.ok("GET", "/acme/tasks"))["tasks"]]
    error = await rest.error("POST", f"/acme/tasks/{task_id}:cancel", status=400)
    assert reason(error) == "TASK_NOT_CANCELABLE"
    error = await rest.error("GET", f"/acme/tasks/{task_id}:subscribe", status=400)
    assert reason(error) == "UNSUPPORTED_OPERATION"
    configs = f"/acme/tasks/{task_id}/pushNotificationConfigs"
    created = await rest.ok("POST", configs, {"url": HOOK})
    assert (await rest.ok("GET", configs))["configs"] == [created]
    assert await rest.ok("GET", f"{configs}/{created['id']}") == created
    assert await rest.ok("DELETE", f"{configs}/{created['id']}") == {}
    assert (await rest.ok("GET", "/acme/extendedAgentCard"))["name"] == EXTENDED_CARD.name
    async with rest.stream("POST", "/acme/message:stream", send_v1("stream")) as stream:
        assert [member_of(e.data) for e in await stream.rest()][-1] == "statusUpdate"
    assert tenants == ["acme"] * 11  # every request above, each seen once


async def test_a_request_message_may_name_its_tenant(
    rest: RestClient, tenants: list[str | None]
) -> None:
    await rest.ok("POST", "/message:send", {**send_v1("hello"), "tenant": "in-body"})
    await rest.ok("GET", "/tasks", params={"tenant": "in-query"})
    await rest.ok("GET", "/tasks")
    assert tenants == ["in-body", "in-query", None]


async def test_the_tenant_v1_is_reserved_for_the_0_3_routes(rest: RestClient) -> None:
    for path in ("/v1/tasks", "/v1/extendedAgentCard"):
        error = await rest.error("GET", path, status=404)
        assert "/v1/" in error["message"]


# --- versions --------------------------------------------------------------------------------


@pytest.mark.parametrize("header", ["1.0", "1.0.1", "1.0.0", "", None])
async def test_the_1_0_routes_serve_1_0_and_requests_naming_no_version(
    base_url: str, header: str | None
) -> None:
    async with connect_rest(base_url, header="") as rest:
        if header is not None:
            rest.http.headers["A2A-Version"] = header
        assert await completed_task_id(rest)


async def test_the_version_may_be_a_query_parameter(base_url: str) -> None:
    async with connect_rest(base_url, header="") as rest:
        task_id = await completed_task_id(rest)
        assert await rest.ok("GET", f"/tasks/{task_id}", params={"A2A-Version": "1.0"})
        error = await rest.error(
            "GET", f"/tasks/{task_id}", params={"A2A-Version": "0.3"}, status=400
        )
    assert reason(error) == "VERSION_NOT_SUPPORTED"


@pytest.mark.parametrize("header", ["0.3", "0.2.5"])
async def test_a_1_0_route_asked_for_in_0_3_is_400(base_url: str, header: str) -> None:
    async with connect_rest(base_url, header=header) as rest:
        error = await rest.error("POST", "/message:send", send_v1("hi"), status=400)
    assert (error["status"], reason(error)) == ("FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
    assert "POST /message:send is an A2A 1.0 route" in error["message"]
    assert "/v1/" in error["message"]


@pytest.mark.parametrize("header", ["0.5", "2.0", "latest"])
async def test_an_unsupported_version_is_400(base_url: str, header: str) -> None:
    async with connect_rest(base_url, header=header) as rest:
        error = await rest.error("GET", "/tasks", status=400)
    assert (error["status"], reason(error)) == ("FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
    (info,) = error["details"]
    assert info["metadata"] == {"requestedVersion": header, "supportedVersions": "0.3, 1.0"}


# --- HTTP-level errors -----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/nope", "/tasks/a/b/c", "/message:sent", "/acme/tasks/x/y"])
async def test_an_unknown_route_is_404(rest: RestClient, path: str) -> None:
    response = await rest.request("GET", path)
    error = status_error(response, 404, "application/json")
    assert error["status"] == "NOT_FOUND"
    assert path in error["message"]


@pytest.mark.parametrize(
    ("verb", "path", "allowed"),
    [
        ("GET", "/message:send", {"POST"}),
        ("PUT", "/tasks", {"GET", "HEAD"}),
        ("GET", "/tasks/x:cancel", {"POST"}),
        ("DELETE", "/tasks/x", {"GET", "HEAD"}),
        ("PATCH", "/tasks/x:subscribe", {"GET", "HEAD", "POST"}),
        ("POST", "/acme/extendedAgentCard", {"GET", "HEAD"}),
        ("GET", "/", {"POST"}),
    ],
)
async def test_a_wrong_verb_is_405(
    rest: RestClient, verb: str, path: str, allowed: set[str]
) -> None:
    response = await rest.request(verb, path)
    error = status_error(response, 405, "application/json")
    assert error["status"] == "UNIMPLEMENTED"
    assert set(response.headers["allow"].split(", ")) == allowed


async def test_a_body_over_the_limit_is_413() -> None:
    async with live_rest(agent_of(echo.agent.executor), max_body_bytes=1000) as rest:
        error = await rest.error("POST", "/message:send", send_v1("x" * 1000), status=413)
        assert "1000 bytes" in error["message"]
        assert await completed_task_id(rest)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
async def test_a_body_not_declared_as_json_is_415(
    rest: RestClient, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    response = await rest.http.post("/message:send", content=b'{"message": {}}', headers=headers)
    error = status_error(response, 415, A2A_JSON)
    assert "Content-Type" in error["message"]


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b'"text"'])
async def test_a_body_that_is_no_json_object_is_400(rest: RestClient, body: bytes) -> None:
    response = await rest.http.post(
        "/message:send", content=body, headers={"Content-Type": A2A_JSON}
    )
    assert status_error(response, 400, A2A_JSON)["status"] == "INVALID_ARGUMENT"


async def test_a_result_that_cannot_be_serialized_is_500_and_the_server_goes_on() -> None:
    app = create_app(echo.agent)

    async def get_task(params: Any, call: Any) -> Starlette:
        return app  # no codec can encode this

    app.state.service.get_task = get_task
    async with live_rest(app) as rest:
        error = await rest.error("GET", "/tasks/t", status=500)
        assert error["status"] == "INTERNAL"
        assert await completed_task_id(rest)


async def test_a_stream_that_fails_after_it_started_ends_with_an_error_event() -> None:
    app = create_app(echo.agent)
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))

    async def records() -> AsyncIterator[EventRecord]:
        yield EventRecord.of("t", 1, task, final=False)
        raise TaskNotFound("task t is gone")

    async def stream_message(params: Any, call: Any, **options: Any) -> AsyncIterator[EventRecord]:
        return records()

    app.state.service.stream_message = stream_message
    async with live_rest(app) as rest:
        response = await rest.request("POST", "/message:stream", send_v1("hi"))
    assert response.status_code == 200
    first, last = response.text.strip().split("\n\n")
    assert first.startswith('id: 1\ndata: {"task":')
    head, data = last.split("\n")
    assert head == "event: error"
    error = json.loads(data.removeprefix("data: "))["error"]
    assert (error["code"], error["status"], reason(error)) == (404, "NOT_FOUND", "TASK_NOT_FOUND")


async def test_json_rpc_and_rest_share_the_tasks(base_url: str, rest: RestClient) -> None:
    async with connect(base_url) as rpc:
        made = await rpc.send("over json-rpc")
    fetched = await rest.ok("GET", f"/tasks/{made['id']}")
    assert text_v1(fetched["artifacts"][0]) == "over json-rpc"


async def test_head_is_answered_as_get(rest: RestClient) -> None:
    got, head = await rest.request("GET", "/tasks"), await rest.request("HEAD", "/tasks")
    assert head.status_code == got.status_code == 200
    assert head.headers["content-type"] == got.headers["content-type"] == A2A_JSON
    assert head.headers["a2a-version"] == "1.0"
    assert head.content == b""
