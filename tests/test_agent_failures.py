"""What a remote caller learns when an agent or the server fails: a reference to the logged
error, never the exception's text (unless the server runs in debug mode); the samples answer
bad input clearly instead of failing."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
import pytest

from accord import Agent, create_app
from accord.grpc.generated.v1_0 import a2a_pb2 as pb
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as rpc_v1
from accord.samples import echo, image, ticker
from accord.server.pipeline import Call, Proceed
from accord.types import TransportProtocol
from agents_for_tests import SAFETY_TIMEOUT, Raises
from rpc import request, send_params, served, text_of

SECRET = "invalid literal for int() with base 10: 'db-password-hunter2'"
REFERENCE = re.compile(r"\(reference ([0-9a-f]{12})\)")


def status_message_text(task: dict[str, Any]) -> str:
    return text_of(task["status"]["message"])


async def _send(http: httpx.AsyncClient, text: str = "hi") -> dict[str, Any]:
    response = await http.post("/", json=request("message/send", send_params(text)))
    body: dict[str, Any] = response.json()
    return body


async def _leaky_hook(call: Call, proceed: Proceed) -> Any:
    if call.inbound.method.endswith(("tasks/get", "GetTask")) or "/tasks/" in call.inbound.method:
        raise ValueError(SECRET)
    return await proceed()


@pytest.fixture(params=[False, True], ids=["production", "debug"])
async def server(
    request: pytest.FixtureRequest,
) -> AsyncIterator[tuple[httpx.AsyncClient, str, bool]]:
    agent = Agent(Raises(ValueError(SECRET)), name="Failing agent")
    app = create_app(agent, grpc_port=0, hooks=[_leaky_hook], debug=request.param)
    with served(app) as base_url:
        interfaces = app.state.service.interfaces.served_interfaces(base_url + "/")
        grpc_url = next(i.url for i in interfaces if i.transport == TransportProtocol.GRPC)
        async with httpx.AsyncClient(base_url=base_url, timeout=SAFETY_TIMEOUT) as http:
            yield http, grpc_url, request.param


def _check(text: str, debug: bool, caplog: pytest.LogCaptureFixture) -> None:
    """`text` names a reference that the log has with the full error; only debug shows it."""
    match = REFERENCE.search(text)
    assert match, text
    assert (SECRET in text) is debug, text
    logged = [r for r in caplog.records if match[1] in r.getMessage()]
    assert logged and logged[0].exc_info is not None
    assert SECRET in str(logged[0].exc_info[1])


async def test_a_failing_agent_tells_the_caller_a_reference(
    server: tuple[httpx.AsyncClient, str, bool], caplog: pytest.LogCaptureFixture
) -> None:
    http, _, debug = server
    caplog.set_level(logging.ERROR)
    task = (await _send(http))["result"]
    assert task["status"]["state"] == "failed"
    _check(status_message_text(task), debug, caplog)
    assert "ValueError" in status_message_text(task) if debug else "ValueError" not in str(task)


async def test_an_unexpected_server_error_tells_each_binding_a_reference(
    server: tuple[httpx.AsyncClient, str, bool], caplog: pytest.LogCaptureFixture
) -> None:
    http, grpc_url, debug = server
    caplog.set_level(logging.ERROR)
    response = await http.post("/", json=request("tasks/get", {"id": "x"}))
    error = response.json()["error"]
    assert error["code"] == -32603
    _check(error["message"], debug, caplog)

    response = await http.get("/tasks/x")
    assert response.status_code == 500
    _check(response.json()["error"]["message"], debug, caplog)

    async with grpc.aio.insecure_channel(grpc_url) as channel:
        stub = rpc_v1.A2AServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.GetTask(pb.GetTaskRequest(id="x"), metadata=(("a2a-version", "1.0"),))
    assert raised.value.code() is grpc.StatusCode.INTERNAL
    _check(raised.value.details() or "", debug, caplog)


# --- samples answer bad input clearly --------------------------------------------------------


@pytest.mark.parametrize("text", ["9" * 5000, "²", "0", "1000000"])
async def test_the_ticker_rejects_a_count_it_cannot_count_to(text: str) -> None:
    with served(create_app(ticker.agent)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=SAFETY_TIMEOUT) as http:
            task = (await _send(http, text))["result"]
    assert task["status"]["state"] == "rejected", task
    said = status_message_text(task)
    assert "from 1 to 1000" in said
    assert "reference" not in said


@pytest.mark.parametrize("text", ["9" * 250 + " circles", "² squares"])
async def test_the_drawing_agent_draws_whatever_number_it_is_given(text: str) -> None:
    with served(create_app(image.agent)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=SAFETY_TIMEOUT) as http:
            task = (await _send(http, text))["result"]
    assert task["status"]["state"] == "completed", task


async def test_the_echo_agent_still_fails_nothing() -> None:
    with served(create_app(echo.agent)) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=SAFETY_TIMEOUT) as http:
            task = (await _send(http, "9" * 5000))["result"]
    assert task["status"]["state"] == "completed"
