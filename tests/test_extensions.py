"""Extensions: declared on the card, activated per request, shaping sends and streams, methods."""

from __future__ import annotations

from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format

from accord import Agent, create_app
from accord.core.call_context import CallContext
from accord.errors import InvalidParams
from accord.extensions import (
    TIMING_URI,
    Extension,
    TimingExtension,
    negotiate,
    requested_extensions,
)
from accord.grpc.generated.v1_0 import a2a_pb2 as pb
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as pb_rpc
from accord.samples.echo import agent as echo
from accord.types import MessageSendParams, TransportProtocol
from agents_for_tests import GatedStreamer
from rest import connect_rest
from rpc import JSON_HEADERS, Json, connect, request, send_params, served
from rpc_v1_0 import assert_valid_v1, send_v1

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


# --- streamed events: shape_event ------------------------------------------------------------

ACTIVATED = [pytest.param(True, id="activated"), pytest.param(False, id="not-activated")]


def timing_stamps(event: Json) -> set[str]:
    """The timing extension's keys in the metadata of a (0.3 or 1.0) event."""
    return {key for key in event.get("metadata") or {} if key.startswith(TIMING_URI)}


def assert_stamped(events: list[Json], activated: bool) -> None:
    """Every event carries the timing stamps of a streamed send if `activated`, else none."""
    assert events
    if not activated:
        assert [timing_stamps(event) for event in events] == [set()] * len(events)
        return
    keys = {f"{TIMING_URI}/{name}" for name in ("receivedAt", "respondedAt", "elapsedMs")}
    assert [timing_stamps(event) for event in events] == [keys] * len(events)
    for event in events:
        metadata = event["metadata"]
        assert metadata[f"{TIMING_URI}/receivedAt"] <= metadata[f"{TIMING_URI}/respondedAt"]
        assert metadata[f"{TIMING_URI}/elapsedMs"] >= 0


def activation(activated: bool, header: str = "A2A-Extensions") -> dict[str, str]:
    return {header: TIMING_URI} if activated else {}


@pytest.mark.parametrize("activated", ACTIVATED)
async def test_json_rpc_stream_events_pass_the_hook(activated: bool) -> None:
    headers = activation(activated, "X-A2A-Extensions")
    with served(create_app(echo)) as url:
        async with connect(url) as client:
            params = send_params("hi")
            async with client.stream("message/stream", params, headers=headers) as stream:
                events = [event.result for event in await stream.rest()]
    assert [event["kind"] for event in events] == [
        "task",
        "status-update",
        "artifact-update",
        "status-update",
    ]
    assert_stamped(events, activated)


@pytest.mark.parametrize("activated", ACTIVATED)
async def test_http_json_stream_events_pass_the_hook(activated: bool) -> None:
    with served(create_app(echo)) as url:
        async with connect_rest(url) as rest:
            body = send_v1("hi")
            async with rest.stream(
                "POST", "/message:stream", body, headers=activation(activated)
            ) as stream:
                responses = [event.data for event in await stream.rest()]
    for response in responses:
        assert_valid_v1("StreamResponse", response)
    assert "task" in responses[0]
    assert_stamped([next(iter(response.values())) for response in responses], activated)


@pytest.mark.parametrize("activated", ACTIVATED)
async def test_grpc_stream_events_pass_the_hook(activated: bool) -> None:
    app = create_app(echo, public_url="http://127.0.0.1:9/", grpc_port=0)
    async with app.router.lifespan_context(app):
        interfaces = app.state.service.interfaces.served_interfaces("http://127.0.0.1/")
        target = next(i.url for i in interfaces if i.transport == TransportProtocol.GRPC)
        async with grpc.aio.insecure_channel(target) as channel:
            request_ = pb.SendMessageRequest(
                message=pb.Message(message_id="m-1", role=pb.ROLE_USER, parts=[pb.Part(text="hi")])
            )
            metadata = tuple((k.lower(), v) for k, v in activation(activated).items())
            stream = pb_rpc.A2AServiceStub(channel).SendStreamingMessage(
                request_, metadata=metadata
            )
            responses = [response async for response in stream]
    events = [
        json_format.MessageToDict(getattr(response, response.WhichOneof("payload")))
        for response in responses
    ]
    assert responses[0].WhichOneof("payload") == "task"
    assert_stamped(events, activated)


async def test_a_resubscribe_is_shaped_for_its_own_request_only() -> None:
    streamer = GatedStreamer(chunks=1)
    agent = Agent(streamer, name="streamer", extensions=[TimingExtension()])
    with served(create_app(agent)) as url:
        async with (
            connect(url) as client,
            connect(url) as watcher,
            client.stream("message/stream", send_params("go")) as plain,
        ):
            task_id = (await plain.next()).result["id"]
            await streamer.started.wait()
            resubscribe = {"id": task_id}
            headers = activation(True)
            async with watcher.stream("tasks/resubscribe", resubscribe, headers=headers) as stamped:
                first = (await stamped.next()).result
                streamer.release_all()
                resubscribed = [first, *[event.result for event in await stamped.rest()]]
            unstamped = [event.result for event in await plain.rest()]
    # A resubscribe brings no message: its events get the time they were sent, nothing more.
    assert {frozenset(timing_stamps(event)) for event in resubscribed} == {
        frozenset({f"{TIMING_URI}/respondedAt"})
    }
    assert [event["kind"] for event in resubscribed][-1] == "status-update"
    assert [timing_stamps(event) for event in unstamped] == [set()] * len(unstamped)
