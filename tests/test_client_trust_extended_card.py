"""A client given trusted keys takes the extended card only when one of them signed it, over
every interface, as it takes the public card."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from accord import Agent, Client, create_app
from accord.errors import A2AClientError
from accord.keys import KeyStore, StaticKeys
from accord.samples import echo
from accord.types import AgentCapabilities, AgentCard, AgentExtension
from live_server import serve_app

INTERFACES = [
    ("JSONRPC", "1.0"),
    ("HTTP+JSON", "1.0"),
    ("GRPC", "1.0"),
    ("JSONRPC", "0.3"),
    ("HTTP+JSON", "0.3"),
    ("GRPC", "0.3"),
]
HTTP_INTERFACES = [i for i in INTERFACES if i[0] != "GRPC"]
EXTENDED_NAME = "Signed echo (members)"
REFUSED = r"the extended agent card at \S+ is not trusted"

Tamper = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture(scope="module")
def keys() -> KeyStore:
    return KeyStore.ephemeral()


@pytest.fixture(scope="module")
def agent_url(keys: KeyStore) -> Iterator[str]:
    """An agent signing its cards with `keys`, on every binding (gRPC too)."""
    # False flags too: the card is signed as each binding spells it, proto3 defaults left out.
    capabilities = AgentCapabilities(
        streaming=True,
        push_notifications=False,
        extensions=[AgentExtension(uri="https://example.com/ext/members", required=False)],
    )
    extended = echo.agent.card("").model_copy(
        update={"name": EXTENDED_NAME, "capabilities": capabilities}
    )
    agent = Agent(echo.agent.executor, name="Signed echo", extended_card=extended)
    with serve_app(create_app(agent, keys=keys, grpc_port=0)) as url:
        yield url


@pytest.fixture(scope="module")
def public_card(agent_url: str) -> AgentCard:
    return AgentCard.model_validate(httpx.get(agent_url + "/.well-known/agent-card.json").json())


@pytest.mark.parametrize(("binding", "version"), INTERFACES, ids=lambda v: v)
async def test_an_extended_card_signed_by_a_trusted_key_is_taken(
    agent_url: str, keys: KeyStore, binding: str, version: str
) -> None:
    trusted = StaticKeys(keys.jwks())
    async with Client(
        agent_url, transport=binding, version=version, trusted_keys=trusted
    ) as client:
        extended = await client.get_extended_card()
    assert extended.name == EXTENDED_NAME and extended.signatures


@pytest.mark.parametrize(("binding", "version"), INTERFACES, ids=lambda v: v)
async def test_an_extended_card_signed_by_another_key_is_refused(
    agent_url: str, public_card: AgentCard, binding: str, version: str
) -> None:
    # The public card is given, so only the extended card meets the strangers' keys.
    strangers = StaticKeys(KeyStore.ephemeral().jwks())
    async with Client(
        agent_url, card=public_card, transport=binding, version=version, trusted_keys=strangers
    ) as client:
        with pytest.raises(A2AClientError, match=REFUSED):
            await client.get_extended_card()
        assert await client.send("still talking") is not None  # only the card is refused


def _unsigned(card: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in card.items() if name != "signatures"}


def _renamed(card: dict[str, Any]) -> dict[str, Any]:
    return {**card, "name": "Impostor"}


@pytest.mark.parametrize("tamper", [_unsigned, _renamed], ids=["unsigned", "renamed"])
@pytest.mark.parametrize(("binding", "version"), HTTP_INTERFACES, ids=lambda v: v)
async def test_an_extended_card_changed_on_the_way_is_refused(
    agent_url: str, keys: KeyStore, binding: str, version: str, tamper: Tamper
) -> None:
    trusted = StaticKeys(keys.jwks())
    async with Client(
        agent_url,
        transport=binding,
        version=version,
        trusted_keys=trusted,
        http_transport=_TamperingTransport(tamper),
    ) as client:
        assert (await client.get_card()).signatures  # the public card passes untouched
        with pytest.raises(A2AClientError, match=REFUSED):
            await client.get_extended_card()


async def test_without_trusted_keys_an_unsigned_extended_card_is_taken(agent_url: str) -> None:
    async with Client(agent_url, http_transport=_TamperingTransport(_unsigned)) as client:
        extended = await client.get_extended_card()
    assert extended.name == EXTENDED_NAME and not extended.signatures


class _TamperingTransport(httpx.AsyncBaseTransport):
    """The network, changing every signed card it carries that is not the public card (a
    JSON-RPC result or an HTTP+JSON body) with `tamper`."""

    def __init__(self, tamper: Tamper) -> None:
        self._tamper = tamper
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if request.url.path.startswith("/.well-known/"):
            return response
        body = await response.aread()
        document = json.loads(body) if body else None
        if isinstance(document, dict) and isinstance(document.get("result"), dict):
            document["result"] = self._changed(document["result"])
        elif isinstance(document, dict):
            document = self._changed(document)
        headers = [
            (k, v)
            for k, v in response.headers.items()
            if k not in ("content-length", "content-encoding")
        ]
        content = json.dumps(document).encode() if document is not None else body
        return httpx.Response(response.status_code, headers=headers, content=content)

    def _changed(self, document: dict[str, Any]) -> dict[str, Any]:
        return self._tamper(document) if "signatures" in document else document

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_the_official_sdk_verifies_the_extended_card_with_its_false_flags(
    agent_url: str, keys: KeyStore
) -> None:
    # The SDK verifies the card as its proto holds it, where a false `required` is unset.
    from a2a.types import AgentCard as ProtoAgentCard
    from a2a.utils.signing import create_signature_verifier
    from google.protobuf.json_format import ParseDict
    from jwt import PyJWK

    request = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
    async with httpx.AsyncClient() as http:
        answer = await http.post(agent_url, json=request, headers={"A2A-Version": "1.0"})
    card = answer.json()["result"]
    published = {key["kid"]: PyJWK(key) for key in keys.jwks()["keys"]}
    verify = create_signature_verifier(lambda kid, jku: published[kid or ""], ["ES256"])
    verify(ParseDict(card, ProtoAgentCard()))  # raises unless a signature verifies
