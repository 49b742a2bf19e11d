"""The HTTP+JSON client against servers that answer as other implementations do: any 2xx,
empty bodies, error bodies that are not a `google.rpc.Status`, 0.3 push config bodies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from accord import A2AClientError, Client
from accord.errors import (
    A2AError,
    InternalError,
    InvalidParams,
    MethodNotFound,
    PermissionDenied,
    RateLimited,
    TaskNotCancelable,
    TaskNotFound,
    Unauthenticated,
    UnsupportedOperation,
)
from accord.types import PushNotificationConfig, Task, TaskState
from live_server import serve_app

Json = dict[str, Any]
VERSIONS = ["1.0", "0.3"]
PREFIX = {"1.0": "", "0.3": "/v1"}
TASK = {
    "1.0": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}},
    "0.3": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}},
}
HOOK = "https://client.example.com/hook"


@dataclass
class Scripted:
    """What the server answers next (status, body, content type), and what it was sent."""

    status: int = 200
    body: bytes = b""
    media_type: str = "application/json"
    received: list[tuple[str, str, Any]] = field(default_factory=list)

    def answer(self, status: int, body: Any = None, media_type: str = "application/json") -> None:
        self.status, self.media_type = status, media_type
        self.body = b"" if body is None else json.dumps(body).encode()


SCRIPT = Scripted()


async def card(request: Request) -> Response:
    base = str(request.base_url).rstrip("/")
    interfaces = [
        {"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": version}
        for version in VERSIONS
    ]
    return JSONResponse(
        {
            "name": "Elsewhere",
            "description": "An agent of another implementation.",
            "version": "1.0.0",
            "supportedInterfaces": interfaces,
            "capabilities": {"pushNotifications": True},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [],
        }
    )


async def anything(request: Request) -> Response:
    body = await request.body()
    SCRIPT.received.append((request.method, request.url.path, json.loads(body) if body else None))
    return Response(SCRIPT.body, SCRIPT.status, media_type=SCRIPT.media_type)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    routes = [
        Route("/.well-known/agent-card.json", card),
        Route("/{path:path}", anything, methods=["GET", "POST", "DELETE"]),
    ]
    with serve_app(Starlette(routes=routes)) as url:
        yield url


@pytest.fixture
def script() -> Iterator[Scripted]:
    SCRIPT.received.clear()
    yield SCRIPT


def client(url: str, version: str) -> Client:
    return Client(url, transport="HTTP+JSON", version=version)


# --- every 2xx is an answer ------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("status", [200, 201, 202])
async def test_a_send_answered_with_any_2xx_is_its_result(
    server: str, script: Scripted, version: str, status: int
) -> None:
    script.answer(status, {"task": TASK[version]})
    async with client(server, version) as agent:
        task = await agent.send("hello")
    assert isinstance(task, Task)
    assert (task.id, task.status.state) == ("t-1", TaskState.COMPLETED)
    assert script.received[0][:2] == ("POST", PREFIX[version] + "/message:send")


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_created_push_config_is_read_from_a_201(
    server: str, script: Scripted, version: str
) -> None:
    config = {"url": HOOK, "id": "hook-1"}
    if version == "1.0":
        script.answer(201, {"taskId": "t-1", **config})
    else:
        name = "tasks/t-1/pushNotificationConfigs/hook-1"
        script.answer(201, {"name": name, "pushNotificationConfig": config})
    async with client(server, version) as agent:
        created = await agent.set_push_config("t-1", PushNotificationConfig(url=HOOK, id="hook-1"))
    assert (created.task_id, created.push_notification_config.id) == ("t-1", "hook-1")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("status", [200, 204])
async def test_an_empty_answer_is_no_content_where_none_is_needed(
    server: str, script: Scripted, version: str, status: int
) -> None:
    script.answer(status)
    async with client(server, version) as agent:
        assert await agent.delete_push_config("t-1", "hook-1") is None
        assert await agent.list_push_configs("t-1") == []


@pytest.mark.parametrize("version", VERSIONS)
async def test_an_empty_answer_where_a_task_is_needed_is_a_client_error(
    server: str, script: Scripted, version: str
) -> None:
    script.answer(204)
    async with client(server, version) as agent:
        with pytest.raises(A2AClientError, match="invalid result"):
            await agent.get_task("t-1")


# --- error bodies other than google.rpc.Status -----------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (404, {"code": -32001, "message": "no task t-1"}, TaskNotFound),
        (400, {"code": -32002, "message": "t-1 is done"}, TaskNotCancelable),
        (400, {"code": -32004, "message": "not here"}, UnsupportedOperation),
        (404, {"type": "TaskNotFoundError", "message": "no task t-1"}, TaskNotFound),
        (400, {"type": "TaskNotCancelableError", "message": "done"}, TaskNotCancelable),
        (400, {"message": "bad id"}, InvalidParams),
        (401, {"message": "who are you?"}, Unauthenticated),
        (403, {"message": "not yours"}, PermissionDenied),
        (404, {"message": "no route"}, MethodNotFound),
        (429, {"message": "slow down"}, RateLimited),
        (400, {"error": {"status": "RESOURCE_EXHAUSTED", "message": "quota"}}, RateLimited),
        (500, {"message": "oops"}, InternalError),
        (404, {"code": 404, "message": "an HTTP code, not a JSON-RPC one"}, MethodNotFound),
    ],
)
async def test_error_bodies_of_other_servers_are_typed(
    server: str,
    script: Scripted,
    version: str,
    status: int,
    body: Json,
    expected: type[A2AError],
) -> None:
    script.answer(status, body)
    async with client(server, version) as agent:
        with pytest.raises(A2AError) as raised:
            await agent.cancel_task("t-1")
    assert type(raised.value) is expected
    assert raised.value.message == (body.get("message") or body["error"]["message"])


@pytest.mark.parametrize("body", [None, {"detail": "no message"}, ["not", "an", "object"]])
async def test_an_error_body_saying_nothing_is_a_client_error_naming_the_status(
    server: str, script: Scripted, body: Any
) -> None:
    script.answer(409, body)
    async with client(server, "1.0") as agent:
        with pytest.raises(A2AClientError, match="HTTP 409") as raised:
            await agent.get_task("t-1")
    assert raised.value.status_code == 409


# --- the 0.3 push config create body ---------------------------------------------------------


@pytest.mark.parametrize("config_id", ["hook-1", None])
async def test_a_0_3_push_config_is_created_with_its_name_and_the_request_around_it(
    server: str, script: Scripted, config_id: str | None
) -> None:
    script.answer(
        200,
        {
            "name": "tasks/t-1/pushNotificationConfigs/x",
            "pushNotificationConfig": {"url": HOOK, "id": "x"},
        },
    )
    async with client(server, "0.3") as agent:
        await agent.set_push_config("t-1", PushNotificationConfig(url=HOOK, id=config_id))
    ((verb, path, body),) = script.received
    assert (verb, path) == ("POST", "/v1/tasks/t-1/pushNotificationConfigs")
    chosen = body["configId"]
    assert chosen == (config_id or chosen) and chosen
    bound = {
        "name": f"tasks/t-1/pushNotificationConfigs/{chosen}",
        "pushNotificationConfig": {"url": HOOK, "id": chosen},
    }
    assert body == {**bound, "parent": "tasks/t-1", "configId": chosen, "config": bound}
