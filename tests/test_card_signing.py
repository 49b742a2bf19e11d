"""Signed agent cards: JWS over the JCS canonical card, served signed, checked by the client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jwt.utils import base64url_decode
from typer.testing import CliRunner

from accord import Agent, Client, create_app
from accord.cli.main import app as cli
from accord.errors import A2AClientError
from accord.keys import (
    CardSignatureError,
    JwksClient,
    KeyStore,
    StaticKeys,
    sign_card,
    verify_card,
)
from accord.keys.cards import canonical_card
from accord.samples import echo
from live_server import serve_app

CARD: dict[str, Any] = {
    "name": "Example Agent",
    "description": "",
    "capabilities": {"streaming": False, "pushNotifications": False, "extensions": []},
    "skills": [],
}


def test_the_canonical_card_leaves_out_signatures_and_empty_values() -> None:
    # Specification 1.0 section 8.4.1: unset and empty members out, keys sorted, no spaces;
    # empty strings and lists go too, as the official SDK's signer and verifier do.
    assert canonical_card(CARD) == (
        b'{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}'
    )
    signed = {**CARD, "signatures": [{"protected": "x", "signature": "y"}]}
    assert canonical_card(signed) == canonical_card(CARD)


async def test_a_card_signed_by_the_official_sdk_verifies() -> None:
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from a2a.utils.signing import create_agent_card_signer
    from google.protobuf.json_format import MessageToDict
    from jwt import PyJWK

    keys = KeyStore.ephemeral()
    key = keys.active()
    card = AgentCard(
        name="Ünïcode agent",
        description="signed elsewhere",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url="https://a.example/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="d", tags=["t"])],
    )
    sign = create_agent_card_signer(
        PyJWK.from_dict({**key.public_jwk(), **_private_members(key)}),
        {"alg": "ES256", "kid": key.kid, "typ": "JOSE", "jku": None},
    )
    document = MessageToDict(sign(card))
    assert await verify_card(document, StaticKeys(keys.jwks())) == key.kid
    document["description"] = "changed"
    with pytest.raises(CardSignatureError):
        await verify_card(document, StaticKeys(keys.jwks()))


def _private_members(key: Any) -> dict[str, Any]:
    from jwt.algorithms import ECAlgorithm

    private: dict[str, Any] = ECAlgorithm.to_jwk(key.private_key, as_dict=True)
    return {"d": private["d"]}


async def test_sign_verify_and_tamper() -> None:
    keys = KeyStore.ephemeral()
    signed = sign_card(CARD, keys.active(), jku="https://agent.example/.well-known/jwks.json")
    [signature] = signed["signatures"]
    header = json.loads(base64url_decode(signature["protected"]))
    assert header == {
        "alg": "ES256",
        "typ": "JOSE",
        "kid": keys.active().kid,
        "jku": "https://agent.example/.well-known/jwks.json",
    }
    assert await verify_card(signed, StaticKeys(keys.jwks())) == keys.active().kid

    for tampered in (
        {**signed, "name": "Evil Agent"},
        {**signed, "url": "https://evil.example/"},
        {**signed, "capabilities": {"streaming": True, "pushNotifications": False}},
    ):
        with pytest.raises(CardSignatureError, match="verif"):
            await verify_card(tampered, StaticKeys(keys.jwks()))
    with pytest.raises(CardSignatureError, match="no trusted key"):
        await verify_card(signed, StaticKeys(KeyStore.ephemeral().jwks()))
    with pytest.raises(CardSignatureError, match="not signed"):
        await verify_card(CARD, StaticKeys(keys.jwks()))


async def test_an_unsigned_payload_or_a_forged_header_is_refused() -> None:
    keys = KeyStore.ephemeral()
    signed = sign_card(CARD, keys.active())
    [signature] = signed["signatures"]
    none_header = "eyJhbGciOiJub25lIiwia2lkIjoiayJ9"  # {"alg":"none","kid":"k"}
    for forged in (
        {"protected": none_header, "signature": ""},
        {"protected": "not base64!", "signature": signature["signature"]},
        {"protected": signature["protected"], "signature": "AAAA"},
    ):
        with pytest.raises(CardSignatureError):
            await verify_card({**CARD, "signatures": [forged]}, StaticKeys(keys.jwks()))


def test_an_rs256_key_signs_too() -> None:
    keys = KeyStore.ephemeral("RS256")
    signed = sign_card(CARD, keys.active())
    header = json.loads(base64url_decode(signed["signatures"][0]["protected"]))
    assert header["alg"] == "RS256"


# --- served cards ----------------------------------------------------------------------------


@pytest.fixture
def key_dir(tmp_path: Path) -> Path:
    return tmp_path / "keys"


@pytest.fixture
def served(key_dir: Path) -> Iterator[str]:
    agent = Agent(echo.agent.executor, name="Signed echo")
    with serve_app(create_app(agent, keys=KeyStore.open(key_dir))) as url:
        yield url


async def test_every_served_card_shape_verifies_with_the_published_keys(served: str) -> None:
    async with httpx.AsyncClient() as http:
        jwks = JwksClient(f"{served}/.well-known/jwks.json", http=http)
        for path in ("/.well-known/agent-card.json", "/.well-known/agent.json"):
            card = (await http.get(served + path)).json()
            assert await verify_card(card, jwks)
            header = json.loads(base64url_decode(card["signatures"][0]["protected"]))
            assert header["jku"] == f"{served}/.well-known/jwks.json"
        # the host a client used is part of the card (its interface URLs): signed as served
        other_host = served.replace("127.0.0.1", "localhost")
        card = (await http.get(other_host + "/.well-known/agent-card.json")).json()
        assert card["url"].startswith("http://localhost")
        assert await verify_card(card, jwks)


async def test_the_client_can_require_a_card_signed_by_trusted_keys(served: str) -> None:
    async with Client(served, trusted_keys=f"{served}/.well-known/jwks.json") as client:
        answer = await client.send("signed hello")
        assert answer is not None
    strangers = StaticKeys(KeyStore.ephemeral().jwks())
    async with Client(served, trusted_keys=strangers) as client:
        with pytest.raises(A2AClientError, match="not trusted"):
            await client.send("hello?")


async def test_an_unsigned_card_is_refused_by_a_client_that_requires_signatures() -> None:
    card = {"name": "x", "url": "http://127.0.0.1:9/", "version": "1", "skills": []}
    with serve_app(_static_card(card)) as url:
        async with Client(url, trusted_keys=StaticKeys(KeyStore.ephemeral().jwks())) as client:
            with pytest.raises(A2AClientError, match="not signed"):
                await client.get_card()


async def test_after_a_rotation_cards_are_signed_by_the_new_key(served: str, key_dir: Path) -> None:
    async with httpx.AsyncClient() as http:
        before = (await http.get(served + "/.well-known/agent-card.json")).json()
        rotated = KeyStore(key_dir).rotate(grace=3600)
        after = (await http.get(served + "/.well-known/agent-card.json")).json()
        published = StaticKeys((await http.get(served + "/.well-known/jwks.json")).json())
        assert await verify_card(after, published) == rotated.kid
        assert await verify_card(before, published) != rotated.kid  # still published


def test_accord_card_verify(served: str) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["card", "verify", served])
    assert result.exit_code == 0, result.output
    assert "signature valid" in result.output

    strangers = KeyStore.ephemeral().jwks()
    with serve_app(_static_card(strangers, path="/jwks.json")) as other:
        refused = runner.invoke(cli, ["card", "verify", served, "--jwks", f"{other}/jwks.json"])
    assert refused.exit_code == 1
    assert "not trusted" in refused.output

    shown = runner.invoke(cli, ["card", served, "--json"])  # `accord card URL` still shows it
    assert shown.exit_code == 0 and json.loads(shown.output)["name"] == "Signed echo"


def test_accord_keys_new_list_rotate(tmp_path: Path) -> None:
    runner = CliRunner()
    directory = str(tmp_path / "keys")
    created = runner.invoke(cli, ["keys", "new", "--dir", directory])
    assert created.exit_code == 0, created.output
    kid = created.output.split()[0]
    again = runner.invoke(cli, ["keys", "new", "--dir", directory])
    assert again.exit_code == 0 and again.output.startswith(f"{kid} ES256 (signing, made before)")
    other_kind = runner.invoke(cli, ["keys", "new", "--dir", directory, "--alg", "RS256"])
    assert other_kind.exit_code == 2 and "rotate" in other_kind.output
    rotated = runner.invoke(cli, ["keys", "rotate", "--dir", directory, "--alg", "RS256"])
    assert rotated.exit_code == 0, rotated.output
    listed = runner.invoke(cli, ["keys", "list", "--dir", directory]).output.splitlines()
    assert listed[0].startswith(f"{kid} ES256") and "published until" in listed[0]
    assert listed[1].endswith("signing") and " RS256 " in listed[1]


def _static_card(document: Any, path: str = "/.well-known/agent-card.json") -> Any:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def serve(request: Any) -> JSONResponse:
        return JSONResponse(document)

    return Starlette(routes=[Route(path, serve)])


async def test_the_official_sdk_verifies_the_1_0_card_accord_serves() -> None:
    from a2a.types import AgentCard
    from a2a.utils.signing import create_signature_verifier
    from google.protobuf.json_format import ParseDict
    from jwt import PyJWK

    base = echo.agent.card("")
    agent = Agent(
        echo.agent.executor,
        name="Ünïcode echo",
        extended_card=base.model_copy(update={"name": "Ünïcode echo (members)"}),
    )
    with serve_app(create_app(agent)) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            request = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
            answer = await http.post("/", json=request, headers={"A2A-Version": "1.0"})
            jwks = (await http.get("/.well-known/jwks.json")).json()
    card = answer.json()["result"]
    keys = {key["kid"]: PyJWK(key) for key in jwks["keys"]}
    verify = create_signature_verifier(lambda kid, jku: keys[kid or ""], ["ES256"])
    verify(ParseDict(card, AgentCard()))  # raises unless a signature verifies
    with pytest.raises(Exception, match="No valid signature"):
        verify(ParseDict({**card, "name": "Impostor"}, AgentCard()))


async def test_a_protected_agent_still_publishes_its_keys_and_signs_its_extended_card() -> None:
    from accord.auth import ApiKey, Security
    from accord.client import ApiKey as ApiKeyCredential

    agent = Agent(
        echo.agent.executor,
        name="Guarded echo",
        security=Security(ApiKey({"s3cret-key": "team-a"})),
        extended_card=echo.agent.card("").model_copy(update={"name": "Guarded (members)"}),
    )
    with serve_app(create_app(agent)) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            jwks = await http.get("/.well-known/jwks.json")  # no credentials needed
            request = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}}
            refused = await http.post("/", json=request)
        trusted = StaticKeys(jwks.json())
        credentials = [ApiKeyCredential("s3cret-key")]
        async with Client(url, trusted_keys=trusted, credentials=credentials) as client:
            extended = await client.get_extended_card()
    assert jwks.status_code == 200 and refused.status_code == 401
    assert extended.name == "Guarded (members)" and extended.signatures
