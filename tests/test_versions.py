"""Version negotiation: A2A-Version header and query parameter, method families, mismatches."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from accord import Agent, create_app
from accord.codecs import ProtocolVersion, named_version, parse_version
from accord.errors import VersionNotSupported
from accord.samples import echo
from rpc import JSON_HEADERS, Json, RpcClient, connect, request, send_params, served
from rpc_v1_0 import error_info, message_v1, send_v1

V0_1, V0_3, V1_0 = ProtocolVersion.V0_1, ProtocolVersion.V0_3, ProtocolVersion.V1_0


# --- parsing, without a server ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "version"),
    [
        ("1.0", V1_0),
        ("1.0.1", V1_0),
        (" 1.0 ", V1_0),
        ("0.3", V0_3),
        ("0.3.0", V0_3),
        ("0.2", V0_3),
        ("0.2.5", V0_3),
        ("0.1", V0_1),
        ("", V0_3),
        ("  ", V0_3),
    ],
)
def test_supported_versions_ignore_the_patch_number(value: str, version: ProtocolVersion) -> None:
    assert parse_version(value) is version


@pytest.mark.parametrize(
    "value",
    ["0.5", "0.4", "1.1", "2.0", "1", "v1.0", "latest", "1.0.0.0", "1.0-rc1", "\uff11.\uff10"],
)
def test_other_versions_are_not_supported(value: str) -> None:
    with pytest.raises(VersionNotSupported) as caught:
        parse_version(value)
    assert caught.value.code == -32009
    assert "0.3, 1.0" in caught.value.message


@pytest.mark.parametrize(
    ("headers", "query", "named"),
    [
        ({}, {}, None),
        ({"A2A-Version": ""}, {}, None),
        ({"A2A-Version": " "}, {"A2A-Version": ""}, None),
        ({"A2A-Version": "1.0"}, {}, "1.0"),
        ({}, {"A2A-Version": "1.0"}, "1.0"),
        ({"A2A-Version": "0.3"}, {"A2A-Version": "1.0"}, "0.3"),
        ({"A2A-Version": ""}, {"A2A-Version": "1.0"}, "1.0"),
    ],
)
def test_the_header_comes_before_the_query_parameter(
    headers: dict[str, str], query: dict[str, str], named: str | None
) -> None:
    assert named_version(headers, query) == named


# --- over HTTP -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with served(
        create_app(Agent(echo.agent.executor, name="Echo", push_notifications=True))
    ) as url:
        yield url


@pytest.fixture
async def rpc(base_url: str) -> AsyncIterator[RpcClient]:
    async with connect(base_url) as client:
        yield client


async def post(
    rpc: RpcClient,
    method: str,
    params: Any,
    *,
    header: str | None = None,
    query: str | None = None,
) -> httpx.Response:
    headers = dict(JSON_HEADERS) if header is None else {**JSON_HEADERS, "A2A-Version": header}
    return await rpc.http.post(
        "/",
        content=json.dumps(request(method, params)),
        headers=headers,
        params={} if query is None else {"A2A-Version": query},
    )


PARAMS = {"message/send": send_params("hi"), "SendMessage": send_v1("hi")}


def served_as(response: httpx.Response) -> str:
    """The version a successful send was answered in, judged by the result's shape."""
    assert response.status_code == 200
    result = response.json()["result"]
    version = "1.0" if "task" in result else "0.3"
    assert version == "0.3" or "kind" not in result["task"]
    assert version == "1.0" or result["kind"] == "task"
    assert response.headers["a2a-version"] == version
    return version


@pytest.mark.parametrize(
    ("header", "method", "version"),
    [
        (None, "message/send", "0.3"),
        ("", "message/send", "0.3"),
        ("0.3", "message/send", "0.3"),
        ("0.3.0", "message/send", "0.3"),
        ("0.2.5", "message/send", "0.3"),
        (None, "SendMessage", "1.0"),
        ("", "SendMessage", "1.0"),
        ("1.0", "SendMessage", "1.0"),
        ("1.0.1", "SendMessage", "1.0"),
    ],
)
async def test_the_method_and_the_header_pick_the_version(
    rpc: RpcClient, header: str | None, method: str, version: str
) -> None:
    response = await post(rpc, method, PARAMS[method], header=header)
    assert served_as(response) == version


async def test_the_version_may_come_as_a_query_parameter(rpc: RpcClient) -> None:
    assert served_as(await post(rpc, "SendMessage", PARAMS["SendMessage"], query="1.0")) == "1.0"
    refused = await post(rpc, "message/send", PARAMS["message/send"], query="1.0")
    assert refused.json()["error"]["code"] == -32009
    header_wins = await post(rpc, "SendMessage", PARAMS["SendMessage"], header="1.0", query="0.3")
    assert served_as(header_wins) == "1.0"


@pytest.mark.parametrize(
    ("header", "method"),
    [
        ("0.5", "message/send"),
        ("0.5", "SendMessage"),
        ("2.0", "SendMessage"),
        ("latest", "message/send"),
        ("0.3", "SendMessage"),
        ("0.3", "SendStreamingMessage"),
        ("1.0", "message/send"),
        ("1.0", "message/stream"),
    ],
)
async def test_unsupported_or_mismatched_versions_are_32009(
    rpc: RpcClient, header: str, method: str
) -> None:
    params = send_params("hi") if "/" in method else send_v1("hi")
    response = await post(rpc, method, params, header=header)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json"), "no stream opened"
    error = response.json()["error"]
    assert error["code"] == -32009
    assert header in error["message"]
    if "/" not in method:
        assert error_info(error)["reason"] == "VERSION_NOT_SUPPORTED"
        assert response.headers["a2a-version"] == "1.0"


async def test_a_mismatch_says_which_header_to_send(rpc: RpcClient) -> None:
    error = (await post(rpc, "SendMessage", send_v1("hi"), header="0.3")).json()["error"]
    assert "send A2A-Version: 1.0" in error["message"]


@pytest.mark.parametrize(("header", "answered_in"), [("1.0", "1.0"), (None, "0.3"), ("9.9", "0.3")])
async def test_errors_before_the_method_is_known_are_in_the_named_version(
    rpc: RpcClient, header: str | None, answered_in: str
) -> None:
    headers = dict(JSON_HEADERS) if header is None else {**JSON_HEADERS, "A2A-Version": header}
    response = await rpc.post(b"{not json", headers=headers)
    assert response.json()["error"]["code"] == -32700
    assert response.headers["a2a-version"] == answered_in


async def test_an_unknown_method_is_32601_whatever_the_version(rpc: RpcClient) -> None:
    for header in (None, "1.0", "0.3"):
        response = await post(rpc, "tasks/frobnicate", {"id": "x"}, header=header)
        assert response.json()["error"]["code"] == -32601


# --- payloads of one version sent to the other's methods --------------------------------------

MESSAGE_1 = message_v1("hi")
MESSAGE_03 = send_params("hi")["message"]
FILE_PART_03 = {
    "kind": "file",
    "file": {"uri": "https://example.com/a.png", "mimeType": "image/png"},
}


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("message/send", {"message": MESSAGE_1}, "message.role"),
        ("message/stream", {"message": MESSAGE_1}, "message.role"),
        ("tasks/pushNotificationConfig/set", {"taskId": "t", "url": "https://h"}, "pushNotif"),
        ("SendMessage", {"message": MESSAGE_03}, "message.role"),
        ("SendStreamingMessage", {"message": MESSAGE_03}, "message.role"),
        ("SendMessage", {"message": {**MESSAGE_1, "parts": [FILE_PART_03]}}, "message.parts.0"),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "pushNotificationConfig": {"url": "https://h"}},
            "url",
        ),
        ("ListTasks", {"status": "working"}, "status"),
    ],
)
async def test_a_payload_of_the_other_version_is_invalid_params(
    rpc: RpcClient, method: str, params: Json, field: str
) -> None:
    response = await post(rpc, method, params)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == -32602
    assert field in error["message"]
    still_serving = await post(rpc, "message/send", send_params("still there?"))
    assert still_serving.json()["result"]["status"]["state"] == "completed"
