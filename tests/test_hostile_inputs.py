"""Values a client controls that once crashed the server: each gets the binding's InvalidParams
shape (JSON-RPC -32602, HTTP 400, gRPC INVALID_ARGUMENT), never a 500 or an internal error."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import httpx
import pytest

from accord import create_app
from accord.grpc.generated.v1_0 import a2a_pb2 as pb
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as rpc_v1
from accord.samples import echo
from accord.store.sql import SqlTaskStore, create_sql_engine
from accord.types import TransportProtocol
from agents_for_tests import SAFETY_TIMEOUT
from rpc import JSON_HEADERS, request, send_params, served

HUGE = "9" * 5000
HUGE_VERSION = f"{HUGE}.0"
OVERFLOWING_TIME = "9999-12-31T23:59:59-05:00"


def _token(payload: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


NESTED_TOKEN = base64.urlsafe_b64encode(b"[" * 10_000 + b"]" * 10_000).decode().rstrip("=")


@pytest.fixture(params=["memory", "sqlite"])
async def http(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    store = None
    if request.param == "sqlite":
        store = SqlTaskStore(create_sql_engine(f"sqlite:///{tmp_path / 'accord.db'}"))
    with served(create_app(echo.agent, store=store)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=SAFETY_TIMEOUT) as client:
            yield client


async def _task_id(http: httpx.AsyncClient) -> str:
    response = await http.post("/", json=request("message/send", send_params("hi")))
    task_id: str = response.json()["result"]["id"]
    return task_id


def _rpc_error(response: httpx.Response, code: int = -32602) -> dict[str, object]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json"), response.text
    error: dict[str, object] = response.json()["error"]
    assert error["code"] == code, error
    return error


def _rest_error(response: httpx.Response, status: int = 400) -> dict[str, object]:
    assert response.status_code == status, response.text
    error: dict[str, object] = response.json()["error"]
    return error


# --- A2A-Version -----------------------------------------------------------------------------


async def test_a_version_of_thousands_of_digits_is_refused_on_json_rpc(
    http: httpx.AsyncClient,
) -> None:
    body = request("tasks/get", {"id": "x"})
    for options in (
        {"headers": {"A2A-Version": HUGE_VERSION}},
        {"params": {"A2A-Version": HUGE_VERSION}},
    ):
        response = await http.post("/", json=body, **options)  # type: ignore[arg-type]
        error = _rpc_error(response, -32009)  # VersionNotSupported
        assert len(str(error["message"])) < 500
        assert response.headers.get("connection") != "close"


async def test_a_version_of_thousands_of_digits_is_refused_on_http_json(
    http: httpx.AsyncClient,
) -> None:
    for options in (
        {"headers": {"A2A-Version": HUGE_VERSION}},
        {"params": {"A2A-Version": HUGE_VERSION}},
    ):
        response = await http.get("/tasks/x", **options)  # type: ignore[arg-type]
        _rest_error(response, 400)


# --- Last-Event-ID ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["²", "١٢", HUGE, str(2**63), "-1", "1.5"])
async def test_a_bad_last_event_id_is_invalid_params_on_json_rpc(
    http: httpx.AsyncClient, value: str
) -> None:
    task_id = await _task_id(http)
    for method, params in (
        ("tasks/resubscribe", {"id": task_id}),
        ("SubscribeToTask", {"id": task_id}),
        ("message/stream", send_params("hi")),
    ):
        headers: dict[str, str | bytes] = {**JSON_HEADERS, "Last-Event-ID": value.encode()}
        if method[0].isupper():
            headers["A2A-Version"] = "1.0"
        response = await http.post("/", json=request(method, params), headers=headers)
        error = _rpc_error(response)
        assert "Last-Event-ID" in str(error["message"])


@pytest.mark.parametrize("value", ["²", HUGE, str(2**63)])
async def test_a_bad_last_event_id_is_400_on_http_json(http: httpx.AsyncClient, value: str) -> None:
    task_id = await _task_id(http)
    for path in (f"/tasks/{task_id}:subscribe", f"/v1/tasks/{task_id}:subscribe"):
        response = await http.get(path, headers={"Last-Event-ID": value.encode()})
        assert "Last-Event-ID" in str(_rest_error(response)["message"])


async def test_the_largest_last_event_id_replays_nothing(http: httpx.AsyncClient) -> None:
    task_id = await _task_id(http)
    headers = {**JSON_HEADERS, "Last-Event-ID": str(2**63 - 1)}
    body = request("tasks/resubscribe", {"id": task_id})
    async with http.stream("POST", "/", json=body, headers=headers) as response:
        assert response.status_code == 200
        text = (await response.aread()).decode()
    assert "-32603" not in text


# --- ListTasks filters and page tokens -------------------------------------------------------


@pytest.mark.parametrize("moment", [OVERFLOWING_TIME, "0001-01-01T00:00:00+05:00"])
async def test_a_timestamp_out_of_range_is_invalid_params(
    http: httpx.AsyncClient, moment: str
) -> None:
    await _task_id(http)
    response = await http.get("/tasks", params={"statusTimestampAfter": moment})
    assert "statusTimestampAfter" in str(_rest_error(response)["message"])
    body = request("ListTasks", {"statusTimestampAfter": moment})
    response = await http.post("/", json=body, headers={"A2A-Version": "1.0"})
    _rpc_error(response)


@pytest.mark.parametrize(
    "token",
    [
        _token([OVERFLOWING_TIME, "x"]),
        _token(["0001-01-01T00:00:00+05:00", "x"]),
        NESTED_TOKEN,
        _token([HUGE, "x"]),
        _token({"a": 1}),
    ],
)
async def test_a_forged_page_token_is_invalid_params(http: httpx.AsyncClient, token: str) -> None:
    await _task_id(http)
    response = await http.get("/tasks", params={"pageToken": token})
    assert "pageToken" in str(_rest_error(response)["message"])
    body = request("ListTasks", {"pageToken": token})
    _rpc_error(await http.post("/", json=body, headers={"A2A-Version": "1.0"}))


# --- gRPC ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [("last-event-id", HUGE), ("last-event-id", str(2**63)), ("a2a-version", HUGE_VERSION)],
)
async def test_grpc_metadata_out_of_range_is_refused(key: str, value: str) -> None:
    app = create_app(echo.agent, grpc_port=0)
    async with app.router.lifespan_context(app):
        served = app.state.service.interfaces.served_interfaces("http://127.0.0.1/")
        target = next(i.url for i in served if i.transport == TransportProtocol.GRPC)
        async with grpc.aio.insecure_channel(target) as channel:
            stub = rpc_v1.A2AServiceStub(channel)
            sent = await stub.SendMessage(
                pb.SendMessageRequest(
                    message=pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text="x")])
                )
            )
            metadata = ((key, value),)
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                call = stub.SubscribeToTask(
                    pb.SubscribeToTaskRequest(id=sent.task.id), metadata=metadata
                )
                async for _ in call:
                    pass
    assert raised.value.code() in (
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,  # an A2A-Version the server does not speak
    ), raised.value.details()


async def test_grpc_bytes_that_are_not_the_request_are_invalid_argument() -> None:
    app = create_app(echo.agent, grpc_port=0)
    async with app.router.lifespan_context(app):
        served = app.state.service.interfaces.served_interfaces("http://127.0.0.1/")
        target = next(i.url for i in served if i.transport == TransportProtocol.GRPC)
        async with grpc.aio.insecure_channel(target) as channel:
            call = channel.unary_unary("/lf.a2a.v1.A2AService/GetTask")
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await call(b"\xff\xff\xff")
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("number", [float("nan"), float("inf")])
async def test_grpc_numbers_json_cannot_hold_are_invalid_argument(number: float) -> None:
    app = create_app(echo.agent, grpc_port=0)
    async with app.router.lifespan_context(app):
        served = app.state.service.interfaces.served_interfaces("http://127.0.0.1/")
        target = next(i.url for i in served if i.transport == TransportProtocol.GRPC)
        async with grpc.aio.insecure_channel(target) as channel:
            message = pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text="x")])
            sent = pb.SendMessageRequest(message=message)
            sent.metadata["n"] = number
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await rpc_v1.A2AServiceStub(channel).SendMessage(sent)
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT, raised.value.details()
