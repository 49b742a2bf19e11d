"""What a card signature cannot cover: requirements without scopes are empty values, which the
canonical form leaves out (as the official SDK's does), so a client pinning keys refuses a
signed card that declares security schemes but no requirement."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from accord import Agent, Client, create_app
from accord.auth import ApiKey, Security
from accord.client import ApiKey as ApiKeyCredential
from accord.client.card_resolver import check_signature
from accord.errors import A2AClientError
from accord.keys import KeyStore, StaticKeys, sign_card, verify_card
from accord.keys.cards import JWKS_PATH, canonical_card, requirements_unsigned
from accord.samples import echo
from live_server import serve_app
from test_card_signing import _private_members

SCHEMES = {"bearer": {"type": "http", "scheme": "bearer"}}
CARD: dict[str, Any] = {"name": "Guarded", "version": "1.0.0", "securitySchemes": SCHEMES}


@pytest.mark.parametrize(
    "requirements",
    [
        {"security": [{"bearer": []}]},  # 0.3
        {"securityRequirements": [{"schemes": {"bearer": {"list": []}}}]},  # 1.0
        {"securityRequirements": [{"schemes": {"bearer": {}}}]},  # 1.0, as protobuf writes it
    ],
)
def test_requirements_without_scopes_canonicalize_away(requirements: dict[str, Any]) -> None:
    assert canonical_card({**CARD, **requirements}) == canonical_card(CARD)
    assert requirements_unsigned(CARD)
    assert not requirements_unsigned({**CARD, **requirements})


def test_requirements_with_scopes_are_signed() -> None:
    scoped = {**CARD, "security": [{"bearer": ["a2a"]}]}
    assert canonical_card(scoped) != canonical_card(CARD)
    assert not requirements_unsigned({"name": "Open", "security": []})  # no schemes: open


async def test_the_official_sdk_signs_no_requirement_without_scopes() -> None:
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        HTTPAuthSecurityScheme,
        SecurityRequirement,
        SecurityScheme,
        StringList,
    )
    from a2a.utils.signing import create_agent_card_signer
    from google.protobuf.json_format import MessageToDict
    from jwt import PyJWK

    keys = KeyStore.ephemeral()
    key = keys.active()
    card = AgentCard(
        name="Guarded",
        description="signed by the SDK",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="d", tags=["t"])],
        supported_interfaces=[
            AgentInterface(
                url="https://a.example/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        security_schemes={
            "bearer": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer")
            )
        },
        security_requirements=[SecurityRequirement(schemes={"bearer": StringList()})],
    )
    sign = create_agent_card_signer(
        PyJWK.from_dict({**key.public_jwk(), **_private_members(key)}),
        {"alg": "ES256", "kid": key.kid, "typ": "JOSE", "jku": None},
    )
    document = MessageToDict(sign(card))
    assert document["securityRequirements"] == [{"schemes": {"bearer": {}}}]
    stripped = {k: v for k, v in document.items() if k != "securityRequirements"}
    assert await verify_card(stripped, StaticKeys(keys.jwks())) == key.kid  # still valid
    with pytest.raises(A2AClientError, match="no requirement"):
        await check_signature(stripped, "https://a.example/", StaticKeys(keys.jwks()))
    assert await check_signature(document, "https://a.example/", StaticKeys(keys.jwks()))


async def test_a_pinning_client_refuses_a_card_whose_requirements_were_removed() -> None:
    agent = Agent(
        echo.agent.executor, name="Keyed", security=Security(ApiKey({"the-key": "alice"}))
    )
    keys = KeyStore.ephemeral()
    with serve_app(create_app(agent, keys=keys)) as url:
        async with httpx.AsyncClient() as http:
            genuine = (await http.get(url + "/.well-known/agent-card.json")).json()
        assert genuine["security"] == [{"apiKey": []}]
        stripped = {
            name: value
            for name, value in genuine.items()
            if name not in ("security", "securityRequirements")
        }
        assert await verify_card(stripped, StaticKeys(keys.jwks()))  # the signature holds

        async def tampered(request: Request) -> JSONResponse:
            return JSONResponse(stripped)

        proxy = Starlette(routes=[Route("/.well-known/agent-card.json", tampered)])
        with serve_app(proxy) as proxy_url:
            credentials = [ApiKeyCredential("the-key")]
            async with Client(
                proxy_url, trusted_keys=url + JWKS_PATH, credentials=credentials
            ) as client:
                with pytest.raises(A2AClientError, match="declares security schemes but no"):
                    await client.send("hello")
            async with Client(url, trusted_keys=url + JWKS_PATH, credentials=credentials) as c:
                assert await c.send("hello") is not None  # the genuine card is accepted


def test_signing_a_card_without_requirements_is_still_possible() -> None:
    # The refusal is the pinning client's: an agent may sign whatever card it serves.
    signed = sign_card(CARD, KeyStore.ephemeral().active())
    assert signed["signatures"]
