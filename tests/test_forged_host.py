"""A caller's `Host` header cannot make the agent sign a card naming the caller's server, nor
set the issuer of its push notifications: a real `accord serve` with signing and an API key,
attacked over JSON-RPC, HTTP+JSON and gRPC; a client pinning the agent's keys never sends its
key to the attacker's listener."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf.json_format import MessageToDict
from jwt.utils import base64url_decode
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from accord import Client
from accord.client import ApiKey
from accord.errors import A2AClientError
from accord.grpc.generated.v0_3 import a2a_pb2 as pb3
from accord.grpc.generated.v0_3 import a2a_pb2_grpc as rpc3
from accord.grpc.generated.v1_0 import a2a_pb2 as pb
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as rpc
from accord.keys import JwksClient, verify_card
from accord.keys.cards import JWKS_PATH
from accord.push import verify
from accord.types import TaskState
from agents_for_tests import SAFETY_TIMEOUT
from live_server import serve_app
from rpc import request, send_params
from served_process import ServedProcess, accord_serve, free_port
from webhooks import NotificationHook, Webhook, receiving

pytestmark = pytest.mark.processes

AGENT_MODULE = """
import accord
from accord.auth import ApiKey, Security
from agents_for_tests import EXTENDED_CARD, switchboard

agent = accord.Agent(
    switchboard(),
    name="Pinned",
    push_notifications=True,
    extended_card=EXTENDED_CARD,
    security=Security(ApiKey({"key-of-alice": "alice"})),
)
"""
KEY = "key-of-alice"
WITH_KEY = {"X-API-Key": KEY}


class Listener:
    """The attacker's server: records every request's headers, serves `card` as its own."""

    def __init__(self) -> None:
        self.card: dict[str, Any] = {}
        self.requests: list[dict[str, str]] = []
        self.lock = threading.Lock()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        with self.lock:
            self.requests.append(dict(request.headers))
        if request.url.path.startswith("/.well-known/agent"):
            await JSONResponse(self.card)(scope, receive, send)
        else:
            await Response("I am not the agent", 500)(scope, receive, send)

    def saw_the_key(self) -> bool:
        with self.lock:
            return any(KEY in value for headers in self.requests for value in headers.values())


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("pinned")
    (directory / "pinned.py").write_text(AGENT_MODULE)
    return directory


def serve_pinned(workdir: Path, grpc_port: int) -> Any:
    options = ("--grpc-port", str(grpc_port), "--push-allow", "127.0.0.1", "--store", "memory")
    return accord_serve("pinned:agent", *options, cwd=workdir)


@pytest.fixture(scope="module")
def agent(workdir: Path) -> Iterator[tuple[ServedProcess, int]]:
    grpc_port = free_port()
    with serve_pinned(workdir, grpc_port) as served:
        yield served, grpc_port


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[Listener, str]]:
    attacker = Listener()
    with serve_app(attacker) as url:
        yield attacker, url


def jku_of(card: dict[str, Any]) -> str:
    header = json.loads(base64url_decode(card["signatures"][0]["protected"]))
    return str(header["jku"])


def elsewhere(card: dict[str, Any], served: str, grpc_port: int) -> set[str]:
    """The URLs a card (any version's JSON shape) names for reaching the agent that are not
    the agent's (its HTTP base URL, its gRPC port); fails if it names none."""
    urls = {card["url"]} if "url" in card else set()
    for member in ("additionalInterfaces", "supportedInterfaces"):
        urls |= {interface["url"] for interface in card.get(member) or []}
    assert urls
    return {url for url in urls if not url.startswith(served) and url != f"127.0.0.1:{grpc_port}"}


# Every request that answers a card, with the credentials it needs: each version's shape of
# the public card, the extended card of each binding and version, and the keys.
CARD_REQUESTS: dict[str, tuple[str, str, dict[str, str], Any]] = {
    "public card": ("GET", "/.well-known/agent-card.json", {}, None),
    "public card 1.0": ("GET", "/.well-known/agent-card.json", {"A2A-Version": "1.0"}, None),
    "public card 0.2": ("GET", "/.well-known/agent.json", {}, None),
    "extended card 0.2": ("GET", "/agent/authenticatedExtendedCard", WITH_KEY, None),
    "extended card JSON-RPC 0.3": (
        "POST", "/", WITH_KEY, request("agent/getAuthenticatedExtendedCard"),
    ),
    "extended card JSON-RPC 1.0": (
        "POST", "/", {**WITH_KEY, "A2A-Version": "1.0"}, request("GetExtendedAgentCard"),
    ),
    "extended card HTTP+JSON 0.3": ("GET", "/v1/card", WITH_KEY, None),
    "extended card HTTP+JSON 1.0": ("GET", "/extendedAgentCard", WITH_KEY, None),
}  # fmt: skip


def card_of(answer: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = answer.json()
    return body.get("result", body) if "jsonrpc" in body else body


@pytest.mark.parametrize("which", list(CARD_REQUESTS))
async def test_a_forged_host_gets_no_card_and_the_true_one_is_signed_for_the_agent(
    agent: tuple[ServedProcess, int], listener: tuple[Listener, str], which: str
) -> None:
    served, grpc_port = agent
    _, attacker_url = listener
    method, path, headers, body = CARD_REQUESTS[which]
    forged_hosts = [attacker_url.removeprefix("http://"), "evil.example", "evil.example:80"]
    async with httpx.AsyncClient(base_url=served.url, timeout=SAFETY_TIMEOUT) as http:
        for host in forged_hosts:
            answer = await http.request(method, path, headers={**headers, "Host": host}, json=body)
            assert answer.status_code == 400, (host, answer.text)
        answer = await http.request(method, path, headers=headers, json=body)
        assert answer.status_code == 200, answer.text
        card = card_of(answer)
        jwks = JwksClient(served.url + JWKS_PATH, http=http)
        assert await verify_card(card, jwks)
    assert elsewhere(card, served.url, grpc_port) == set()
    assert jku_of(card) == served.url + JWKS_PATH


@pytest.mark.parametrize("transport", ["JSONRPC", "HTTP+JSON"])
async def test_a_client_pinning_the_agent_keys_never_sends_its_key_to_the_attacker(
    agent: tuple[ServedProcess, int], listener: tuple[Listener, str], transport: str
) -> None:
    served, _ = agent
    attacker, attacker_url = listener
    card_path = "/.well-known/agent-card.json"
    async with httpx.AsyncClient(timeout=SAFETY_TIMEOUT) as http:
        # The attacker asks the agent for a card naming the attacker's listener; failing that,
        # it rewrites the agent's own card to name it.
        forged = await http.get(
            served.url + card_path, headers={"Host": attacker_url.removeprefix("http://")}
        )
        if forged.status_code == 200:
            attacker.card = forged.json()
        else:
            genuine = (await http.get(served.url + card_path)).text
            attacker.card = json.loads(genuine.replace(served.url, attacker_url))
    keys = served.url + JWKS_PATH
    async with Client(
        attacker_url, trusted_keys=keys, credentials=[ApiKey(KEY)], transport=transport
    ) as client:
        with pytest.raises(A2AClientError):
            await client.send("hello")
    assert not attacker.saw_the_key()
    assert forged.status_code == 400

    # Relaying the agent's genuine card is all the attacker can do: the client then talks to
    # the agent, whose URLs the signature covers.
    async with httpx.AsyncClient(timeout=SAFETY_TIMEOUT) as http:
        attacker.card = (await http.get(served.url + card_path)).json()
    async with Client(
        attacker_url, trusted_keys=keys, credentials=[ApiKey(KEY)], transport=transport
    ) as client:
        assert await client.send("hello") is not None
        assert client.interface is not None and client.interface.url.startswith(served.url)
    assert not attacker.saw_the_key()


async def test_grpc_cards_name_the_agent_whatever_authority_the_call_names(
    agent: tuple[ServedProcess, int],
) -> None:
    served, grpc_port = agent
    options = [("grpc.default_authority", "evil.example:1")]
    metadata = (("x-api-key", KEY),)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}", options=options) as channel:
        v1 = await rpc.A2AServiceStub(channel).GetExtendedAgentCard(
            pb.GetExtendedAgentCardRequest(), metadata=metadata
        )
        v0_3 = await rpc3.A2AServiceStub(channel).GetAgentCard(
            pb3.GetAgentCardRequest(), metadata=metadata
        )
    async with httpx.AsyncClient(timeout=SAFETY_TIMEOUT) as http:
        jwks = JwksClient(served.url + JWKS_PATH, http=http)
        for card in (MessageToDict(v1), MessageToDict(v0_3)):
            assert await verify_card(card, jwks)
            assert jku_of(card) == served.url + JWKS_PATH
            assert elsewhere(card, served.url, grpc_port) == set()


async def issuers_notified(hook: Webhook, keys: str, hook_url: str) -> set[str]:
    found = set()
    for headers, body in list(hook.received):
        notification = await verify(body, headers, keys=keys, audience=hook_url)
        found.add(str(notification.claims["iss"]))
    return found


async def test_a_forged_host_cannot_set_the_push_issuer(workdir: Path) -> None:
    hook = Webhook()
    with receiving(hook) as hook_url, serve_pinned(workdir, free_port()) as served:
        configuration = {"blocking": True, "pushNotificationConfig": {"url": hook_url}}
        forged_first = request("message/send", send_params("hi", configuration=configuration))
        async with httpx.AsyncClient(base_url=served.url, timeout=SAFETY_TIMEOUT) as http:
            # The first A2A request the server gets, over each HTTP binding, names a forged Host.
            for host in ("evil.example", "evil.example:8000"):
                answer = await http.post("/", json=forged_first, headers={**WITH_KEY, "Host": host})
                assert answer.status_code == 400
                answer = await http.post(
                    "/v1/message:send",
                    json={"message": {"messageId": "m-1", "role": "ROLE_USER",
                                      "content": [{"text": "hi"}]}},
                    headers={**WITH_KEY, "Host": host},
                )  # fmt: skip
                assert answer.status_code == 400
            answer = await http.post("/", json=forged_first, headers=WITH_KEY)
            assert answer.json()["result"]["status"]["state"] == "completed"
        await hook.reached("completed").wait()
        found = await issuers_notified(hook, served.url + JWKS_PATH, hook_url)
    assert found == {served.url + "/"}


async def test_a_first_call_over_grpc_teaches_the_issuer_of_the_http_bindings(
    workdir: Path,
) -> None:
    hook = NotificationHook()
    grpc_port = free_port()
    with receiving(hook) as hook_url, serve_pinned(workdir, grpc_port) as served:
        options = [("grpc.default_authority", "evil.example:1")]
        async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}", options=options) as channel:
            message = pb.Message(message_id="m-1", role=pb.ROLE_USER, parts=[pb.Part(text="hi")])
            configuration = pb.SendMessageConfiguration(
                task_push_notification_config=pb.TaskPushNotificationConfig(url=hook_url)
            )
            await rpc.A2AServiceStub(channel).SendMessage(
                pb.SendMessageRequest(message=message, configuration=configuration),
                metadata=(("x-api-key", KEY),),
            )
        await hook.reached(TaskState.COMPLETED).wait()
        found = await issuers_notified(hook, served.url + JWKS_PATH, hook_url)
    assert found == {served.url + "/"}
