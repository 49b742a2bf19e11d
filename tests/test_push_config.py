"""Push notification configs over JSON-RPC, in 0.3 and 1.0: CRUD, capability, validation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette

from accord import Agent, create_app
from accord.samples import echo
from accord.store import InMemoryTaskStore
from rpc import Json, RpcClient, connect, send_params, served
from rpc_v1_0 import assert_valid_v1, connect_v1, error_info, send_v1

HOOK = "https://client.example.com/hook"


def app_of(*, push_notifications: bool) -> Starlette:
    return create_app(
        Agent(echo.agent.executor, name="Pusher", push_notifications=push_notifications)
    )


@pytest.fixture(scope="module")
def app() -> Starlette:
    return app_of(push_notifications=True)


@pytest.fixture(scope="module")
def base_url(app: Starlette) -> Iterator[str]:
    with served(app) as url:
        yield url


@pytest.fixture
async def v03(base_url: str) -> AsyncIterator[RpcClient]:
    async with connect(base_url) as client:
        yield client


@pytest.fixture
async def v1(base_url: str) -> AsyncIterator[RpcClient]:
    async with connect_v1(base_url) as client:
        yield client


@pytest.fixture
async def task_id(v03: RpcClient) -> str:
    task = await v03.send("a task to watch")
    task_id: str = task["id"]
    return task_id


def stored_tasks(app: Starlette) -> int:
    store = app.state.runtime.store
    assert isinstance(store, InMemoryTaskStore)
    return len(store)


async def test_the_card_declares_push_notifications(v03: RpcClient) -> None:
    card = (await v03.http.get("/.well-known/agent-card.json")).json()
    assert card["capabilities"]["pushNotifications"] is True


# --- 0.3 -------------------------------------------------------------------------------------


def config_03(task_id: str, url: str = HOOK, **config: Any) -> Json:
    return {"taskId": task_id, "pushNotificationConfig": {"url": url, **config}}


async def test_0_3_set_get_list_delete(v03: RpcClient, task_id: str) -> None:
    first = await v03.result("tasks/pushNotificationConfig/set", config_03(task_id, token="t1"))
    first_id = first["pushNotificationConfig"]["id"]
    assert first_id, "a config set without an id gets one"
    assert first == config_03(task_id, token="t1", id=first_id)
    second = config_03(task_id, HOOK + "/2", id="second")
    assert await v03.result("tasks/pushNotificationConfig/set", second) == second

    by_id = {"id": task_id, "pushNotificationConfigId": "second"}
    assert await v03.result("tasks/pushNotificationConfig/get", by_id) == second
    assert await v03.result("tasks/pushNotificationConfig/get", {"id": task_id}) == first
    listed = await v03.result("tasks/pushNotificationConfig/list", {"id": task_id})
    assert listed == [first, second]

    delete = {"id": task_id, "pushNotificationConfigId": first_id}
    assert await v03.result("tasks/pushNotificationConfig/delete", delete) is None
    assert await v03.result("tasks/pushNotificationConfig/delete", delete) is None, "idempotent"
    listed = await v03.result("tasks/pushNotificationConfig/list", {"id": task_id})
    assert listed == [second]
    gone = {"id": task_id, "pushNotificationConfigId": first_id}
    error = await v03.error("tasks/pushNotificationConfig/get", gone)
    assert error["code"] == -32001
    assert first_id in error["message"]


async def test_0_3_set_with_a_known_id_replaces_that_config(v03: RpcClient, task_id: str) -> None:
    await v03.result("tasks/pushNotificationConfig/set", config_03(task_id, id="c"))
    replaced = config_03(task_id, HOOK + "/new", id="c", token="fresh")
    await v03.result("tasks/pushNotificationConfig/set", replaced)
    assert await v03.result("tasks/pushNotificationConfig/list", {"id": task_id}) == [replaced]


async def test_0_3_get_of_a_task_without_configs_is_32001(v03: RpcClient, task_id: str) -> None:
    error = await v03.error("tasks/pushNotificationConfig/get", {"id": task_id})
    assert error["code"] == -32001
    assert await v03.result("tasks/pushNotificationConfig/list", {"id": task_id}) == []


# --- 1.0 -------------------------------------------------------------------------------------


async def test_1_0_create_get_list_delete(v1: RpcClient, task_id: str) -> None:
    create = {
        "taskId": task_id,
        "url": HOOK,
        "token": "tok",
        "authentication": {"scheme": "Bearer", "credentials": "secret"},
    }
    created = await v1.result("CreateTaskPushNotificationConfig", create)
    assert_valid_v1("TaskPushNotificationConfig", created)
    assert created == {**create, "id": created["id"]}
    assert created["id"]
    other = await v1.result(
        "CreateTaskPushNotificationConfig", {"taskId": task_id, "id": "other", "url": HOOK}
    )
    assert other == {"taskId": task_id, "id": "other", "url": HOOK}

    name = {"taskId": task_id, "id": created["id"]}
    got = await v1.result("GetTaskPushNotificationConfig", name)
    assert got == created
    listed = await v1.result("ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert_valid_v1("ListTaskPushNotificationConfigsResponse", listed)
    assert listed == {"configs": [created, other], "nextPageToken": ""}

    assert await v1.result("DeleteTaskPushNotificationConfig", name) == {}
    assert await v1.result("DeleteTaskPushNotificationConfig", name) == {}, "idempotent"
    listed = await v1.result("ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert listed["configs"] == [other]
    error = await v1.error("GetTaskPushNotificationConfig", name)
    assert error["code"] == -32001
    assert error_info(error)["reason"] == "TASK_NOT_FOUND"


async def test_configs_are_the_same_whichever_version_set_them(
    v03: RpcClient, v1: RpcClient, task_id: str
) -> None:
    await v1.result(
        "CreateTaskPushNotificationConfig",
        {"taskId": task_id, "id": "new", "url": HOOK, "authentication": {"scheme": "Basic"}},
    )
    auth_03 = {"schemes": ["Bearer"], "credentials": "c"}
    await v03.result(
        "tasks/pushNotificationConfig/set", config_03(task_id, id="old", authentication=auth_03)
    )
    seen_by_03 = await v03.result("tasks/pushNotificationConfig/list", {"id": task_id})
    assert [c["pushNotificationConfig"].get("authentication") for c in seen_by_03] == [
        {"schemes": ["Basic"]},
        auth_03,
    ]
    seen_by_1 = await v1.result("ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert [c["authentication"] for c in seen_by_1["configs"]] == [
        {"scheme": "Basic"},
        {"scheme": "Bearer", "credentials": "c"},
    ]


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("CreateTaskPushNotificationConfig", {"url": HOOK}, "taskId"),
        ("CreateTaskPushNotificationConfig", {"taskId": "t"}, "url"),
        ("CreateTaskPushNotificationConfig", config_03("t"), "url"),
        ("GetTaskPushNotificationConfig", {"taskId": "t"}, "id"),
        ("DeleteTaskPushNotificationConfig", {"id": "c"}, "taskId"),
        ("ListTaskPushNotificationConfigs", {"id": "t"}, "taskId"),
    ],
)
async def test_1_0_bad_params_name_the_field(
    v1: RpcClient, method: str, params: Json, field: str
) -> None:
    error = await v1.error(method, params)
    assert error["code"] == -32602
    assert f"{method}: {field}:" in error["message"]


async def test_0_3_set_with_a_1_0_payload_is_invalid_params(v03: RpcClient) -> None:
    error = await v03.error("tasks/pushNotificationConfig/set", {"taskId": "t", "url": HOOK})
    assert error["code"] == -32602
    assert "pushNotificationConfig" in error["message"]


# --- both versions: unknown tasks, no capability, inline configs -----------------------------

OPERATIONS_03 = [
    ("tasks/pushNotificationConfig/set", lambda t: config_03(t)),
    ("tasks/pushNotificationConfig/get", lambda t: {"id": t, "pushNotificationConfigId": "c"}),
    ("tasks/pushNotificationConfig/list", lambda t: {"id": t}),
    ("tasks/pushNotificationConfig/delete", lambda t: {"id": t, "pushNotificationConfigId": "c"}),
]
OPERATIONS_1 = [
    ("CreateTaskPushNotificationConfig", lambda t: {"taskId": t, "url": HOOK}),
    ("GetTaskPushNotificationConfig", lambda t: {"taskId": t, "id": "c"}),
    ("ListTaskPushNotificationConfigs", lambda t: {"taskId": t}),
    ("DeleteTaskPushNotificationConfig", lambda t: {"taskId": t, "id": "c"}),
]
OPERATIONS = [("0.3", *op) for op in OPERATIONS_03] + [("1.0", *op) for op in OPERATIONS_1]


def client_of(version: str, v03: RpcClient, v1: RpcClient) -> RpcClient:
    return v1 if version == "1.0" else v03


@pytest.mark.parametrize(("version", "method", "params"), OPERATIONS)
async def test_operations_on_an_unknown_task_are_32001(
    v03: RpcClient, v1: RpcClient, version: str, method: str, params: Any
) -> None:
    error = await client_of(version, v03, v1).error(method, params("no-such-task"))
    assert error["code"] == -32001
    assert "no-such-task" in error["message"]


@pytest.mark.parametrize(("version", "method", "params"), OPERATIONS)
async def test_operations_are_32003_when_the_agent_declares_no_push(
    version: str, method: str, params: Any
) -> None:
    with served(app_of(push_notifications=False)) as url:
        async with connect(url) as v03, connect_v1(url) as v1:
            task = await v03.send("no push here")
            error = await client_of(version, v03, v1).error(method, params(task["id"]))
    assert error["code"] == -32003
    if version == "1.0":
        assert error_info(error)["reason"] == "PUSH_NOTIFICATION_NOT_SUPPORTED"


async def test_a_config_sent_with_a_0_3_message_is_kept(v03: RpcClient) -> None:
    configuration = {"pushNotificationConfig": {"url": HOOK, "id": "inline"}}
    task = await v03.send("watch me", configuration=configuration)
    listed = await v03.result("tasks/pushNotificationConfig/list", {"id": task["id"]})
    assert listed == [config_03(task["id"], id="inline")]


async def test_a_config_sent_with_a_1_0_message_is_kept(v1: RpcClient) -> None:
    configuration = {"taskPushNotificationConfig": {"url": HOOK, "token": "t"}}
    result = await v1.result("SendMessage", send_v1("watch me", configuration=configuration))
    task_id = result["task"]["id"]
    listed = await v1.result("ListTaskPushNotificationConfigs", {"taskId": task_id})
    (config,) = listed["configs"]
    assert (config["taskId"], config["url"], config["token"]) == (task_id, HOOK, "t")


INLINE_03 = send_params("x", configuration={"pushNotificationConfig": {"url": HOOK}})
INLINE_1 = send_v1("x", configuration={"taskPushNotificationConfig": {"url": HOOK}})


@pytest.mark.parametrize(
    ("version", "method", "params"),
    [
        ("0.3", "message/send", INLINE_03),
        ("0.3", "message/stream", INLINE_03),
        ("1.0", "SendMessage", INLINE_1),
        ("1.0", "SendStreamingMessage", INLINE_1),
    ],
)
async def test_a_config_sent_to_an_agent_without_push_is_32003_and_nothing_runs(
    version: str, method: str, params: Json
) -> None:
    app = app_of(push_notifications=False)
    with served(app) as url:
        async with connect(url) as v03, connect_v1(url) as v1:
            error = await client_of(version, v03, v1).error(method, params)
    assert error["code"] == -32003
    assert stored_tasks(app) == 0
