"""Extensions: declared on the card, activated per request by header, shaping sends, new methods."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from accord import Agent, create_app
from accord.errors import InvalidParams
from accord.extensions import (
    TIMING_URI,
    Extension,
    TimingExtension,
    negotiate,
    requested_extensions,
)
from accord.samples.echo import agent as echo
from accord.server.call_context import CallContext
from accord.types import MessageSendParams
from rpc import JSON_HEADERS, Json, request, send_params, served
from rpc_v1_0 import send_v1

REQUIRED_URI = "urn:test:ext:required:v1"


class Required(Extension):
    """A required profile extension: every send must carry `<uri>/ticket` in its metadata."""

    uri = REQUIRED_URI
    required = True

    async def shape_request(self, params: MessageSendParams, call: CallContext) -> None:
        if not (params.metadata or {}).get(self.metadata_key("ticket")):
            raise InvalidParams(f"metadata {self.metadata_key('ticket')} is required")


def strict_echo() -> Agent:
    return Agent(echo.executor, name="strict", extensions=[Required(), TimingExtension()])


async def post(base_url: str, body: Json, headers: dict[str, str] | None = None) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base_url) as http:
        return await http.post("/", json=body, headers={**JSON_HEADERS, **(headers or {})})


def test_headers_name_the_extensions_to_activate() -> None:
    headers = {"A2A-Extensions": " a, b ,", "X-A2A-Extensions": "b,c"}
    assert requested_extensions(headers) == ["a", "b", "c"]
    assert requested_extensions({}) == []
    activation = negotiate([TimingExtension(), Required()], ["x", TIMING_URI])
    assert activation.uris == [TIMING_URI]
    assert activation.missing_required == (REQUIRED_URI,)
    assert negotiate([TimingExtension()], []).response_headers() == {}


async def test_the_card_declares_the_echo_agents_extension() -> None:
    with served(create_app(echo)) as url:
        async with httpx.AsyncClient() as http:
            card = (await http.get(url + "/.well-known/agent-card.json")).json()
    (entry,) = card["capabilities"]["extensions"]
    assert entry == {
        "uri": TIMING_URI,
        "description": TimingExtension.description,
        "params": {"clock": "UTC"},
    }


@pytest.mark.parametrize("header", ["X-A2A-Extensions", "A2A-Extensions"])
async def test_an_activated_extension_is_echoed_and_stamps_the_result(header: str) -> None:
    with served(create_app(echo)) as url:
        response = await post(url, request("message/send", send_params("hi")), {header: TIMING_URI})
    assert response.headers["X-A2A-Extensions"] == TIMING_URI
    assert response.headers["A2A-Extensions"] == TIMING_URI
    metadata = response.json()["result"]["metadata"]
    assert metadata[f"{TIMING_URI}/receivedAt"] <= metadata[f"{TIMING_URI}/respondedAt"]
    assert metadata[f"{TIMING_URI}/elapsedMs"] >= 0


async def test_without_activation_nothing_changes() -> None:
    with served(create_app(echo)) as url:
        response = await post(url, request("message/send", send_params("hi")))
        ignored = await post(
            url, request("message/send", send_params("hi")), {"A2A-Extensions": "urn:unknown"}
        )
    assert "X-A2A-Extensions" not in response.headers
    assert "metadata" not in response.json()["result"]
    assert "A2A-Extensions" not in ignored.headers


async def test_a_1_0_send_is_stamped_too() -> None:
    headers = {"A2A-Version": "1.0", "A2A-Extensions": TIMING_URI}
    with served(create_app(echo)) as url:
        response = await post(url, request("SendMessage", send_v1("hi")), headers)
    task = response.json()["result"]["task"]
    assert f"{TIMING_URI}/respondedAt" in task["metadata"]
    assert response.headers["A2A-Extensions"] == TIMING_URI


async def test_an_extension_method_answers_on_the_same_endpoint() -> None:
    with served(create_app(echo)) as url:
        response = await post(url, request("timing/now", {}))
        unknown = await post(url, request("timing/never", {}))
    assert response.json()["result"]["now"].endswith("Z")
    assert unknown.json()["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("method", "params", "headers", "code"),
    [
        ("message/send", send_params("hi"), {}, -32600),
        ("SendMessage", send_v1("hi"), {"A2A-Version": "1.0"}, -32008),
    ],
)
async def test_a_required_extension_left_out_is_refused(
    method: str, params: Any, headers: dict[str, str], code: int
) -> None:
    with served(create_app(strict_echo())) as url:
        response = await post(url, request(method, params), headers)
    error = response.json()["error"]
    assert error["code"] == code
    assert REQUIRED_URI in error["message"]


async def test_a_required_extension_left_out_over_http_json() -> None:
    body = {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    with served(create_app(strict_echo())) as url:
        async with httpx.AsyncClient() as http:
            response = await http.post(url + "/message:send", json=body)
    assert response.status_code == 400
    assert REQUIRED_URI in response.json()["error"]["message"]


async def test_a_profile_extension_checks_the_request_it_activates() -> None:
    activate = {"X-A2A-Extensions": REQUIRED_URI}
    ticket = {f"{REQUIRED_URI}/ticket": "T-1"}
    with served(create_app(strict_echo())) as url:
        refused = await post(url, request("message/send", send_params("hi")), activate)
        accepted = await post(
            url, request("message/send", {**send_params("hi"), "metadata": ticket}), activate
        )
    assert refused.json()["error"]["code"] == -32602
    assert accepted.json()["result"]["status"]["state"] == "completed"
    assert accepted.headers["X-A2A-Extensions"] == REQUIRED_URI
