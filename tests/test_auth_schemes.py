"""Each security scheme on a live server: what the card declares, what a refusal says
(WWW-Authenticate, each binding's error), Basic, API keys in a query or cookie, opaque and JWT
bearer tokens, key rotation, discovery caching, AND requirements, skills and policies."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import jwt
import pytest
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

import accord
from accord import RequestContext
from accord.auth import ApiKey, Basic, Bearer, JwtCheck, MutualTls, OAuth2, OpenIdConnect, Security
from accord.core import Inbound, Principal
from accord.samples import echo
from accord.types import AgentSkill
from conftest import SchemaErrors
from rpc import served
from token_issuer import AUDIENCE, TokenIssuer, running_issuer

CARD = "/.well-known/agent-card.json"
GET_TASK = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}}
V1 = {"A2A-Version": "1.0"}
SECRET = "a-shared-secret-long-enough-for-sha256"


@pytest.fixture(scope="module")
def issuer() -> Iterator[TokenIssuer]:
    with running_issuer() as running:
        yield running


def passwords(user: str, password: str) -> str | None:
    return user if (user, password) == ("ada", "lovelace") else None


async def opaque(token: str) -> Principal | None:
    return Principal("svc", scopes=frozenset({"a2a"})) if token == "opaque-token" else None


@accord.agent
def whoami(context: RequestContext) -> str:
    """Names the caller."""
    return f"{context.principal.id}/{context.principal.scheme}"


def agent(security: Security, **card: Any) -> accord.Agent:
    return accord.Agent(whoami.executor, name="Guarded", security=security, **card)


@pytest.fixture
async def every_scheme(issuer: TokenIssuer) -> AsyncIterator[httpx.AsyncClient]:
    security = Security(
        ApiKey({"k-1": "team-a"}, parameter="api_key", location="query", name="query"),
        ApiKey({"c-1": "team-c"}, parameter="session", location="cookie", name="cookie"),
        Basic(passwords),
        Bearer(opaque),
        Bearer(jwt=JwtCheck(issuer.jwks_url, issuer=issuer.url, audience=AUDIENCE), name="jwt"),
        OAuth2(
            token_url=issuer.token_url,
            scopes={"a2a": "talk to the agent"},
            jwks_url=issuer.jwks_url,
            audience=AUDIENCE,
        ),
        OpenIdConnect(issuer.discovery_url, audience=AUDIENCE),
        MutualTls(),
        require=["query", "cookie", "basic", "bearer", "jwt", {"oauth2": ["a2a"]}, "oidc", "mtls"],
    )
    with served(agent(security).app()) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            yield http


async def send(http: httpx.AsyncClient, **options: Any) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "messageId": "m1",
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}],
            }
        },
    }
    return await http.post("/", json=body, **options)


def replied(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    text: str = response.json()["result"]["parts"][0]["text"]
    return text


async def test_the_card_declares_every_scheme_in_both_versions(
    every_scheme: httpx.AsyncClient, issuer: TokenIssuer
) -> None:
    card = (await every_scheme.get(CARD)).json()
    schemes = card["securitySchemes"]
    assert schemes["query"]["type"] == "apiKey" and schemes["query"]["in"] == "query"
    assert schemes["query"]["apiKeySecurityScheme"] == {"name": "api_key", "location": "query"}
    assert schemes["basic"]["httpAuthSecurityScheme"] == {"scheme": "Basic"}
    assert schemes["jwt"]["httpAuthSecurityScheme"] == {"scheme": "Bearer", "bearerFormat": "JWT"}
    flow = schemes["oauth2"]["oauth2SecurityScheme"]["flows"]["clientCredentials"]
    assert flow["tokenUrl"] == issuer.token_url
    oidc = schemes["oidc"]["openIdConnectSecurityScheme"]
    assert oidc["openIdConnectUrl"] == issuer.discovery_url
    assert "mtlsSecurityScheme" in schemes["mtls"]
    assert card["security"][5] == {"oauth2": ["a2a"]}  # 0.3
    assert card["securityRequirements"][5] == {"schemes": {"oauth2": {"list": ["a2a"]}}}  # 1.0
    assert len(card["security"]) == len(card["securityRequirements"]) == 8


async def test_the_card_is_valid_in_both_versions(
    every_scheme: httpx.AsyncClient, schema_errors: SchemaErrors
) -> None:
    # Imported here: that module skips itself where the spec files are absent.
    from rpc_v1_0 import assert_valid_v1
    from test_agent_card_versions import ONLY_V0_3, ONLY_V1_0, assert_valid_v0_3, without

    card = (await every_scheme.get(CARD)).json()
    assert_valid_v0_3(without(card, ONLY_V1_0), schema_errors)
    assert_valid_v1("AgentCard", without(card, ONLY_V0_3))


async def test_the_public_card_needs_no_credentials_and_every_call_does(
    every_scheme: httpx.AsyncClient,
) -> None:
    assert (await every_scheme.get(CARD)).status_code == 200
    refused = await every_scheme.post("/", json=GET_TASK, headers=V1)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == -32040
    assert "requires authentication" in refused.json()["error"]["message"]
    challenge = refused.headers["www-authenticate"]
    for named in ('ApiKey query="api_key"', 'ApiKey cookie="session"', "Basic realm=", "Bearer"):
        assert named in challenge
    rest = await every_scheme.get("/tasks/nope", headers=V1)
    assert rest.status_code == 401
    assert rest.json()["error"]["status"] == "UNAUTHENTICATED"
    assert rest.headers["www-authenticate"] == challenge


async def test_a_refused_token_is_named_in_the_bearer_challenge(
    every_scheme: httpx.AsyncClient, issuer: TokenIssuer
) -> None:
    expired = issuer.token(expires_in=-100)
    response = await send(every_scheme, headers={"Authorization": f"Bearer {expired}"})
    assert response.status_code == 401
    assert "expired" in response.json()["error"]["message"]
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


async def test_api_keys_in_a_query_parameter_and_a_cookie(every_scheme: httpx.AsyncClient) -> None:
    assert replied(await send(every_scheme, params={"api_key": "k-1"})) == "team-a/query"
    every_scheme.cookies.set("session", "c-1")
    assert replied(await send(every_scheme)) == "team-c/cookie"
    every_scheme.cookies.set("session", "c-2")
    assert (await send(every_scheme)).status_code == 401


async def test_basic_checks_the_password_with_the_verifier(every_scheme: httpx.AsyncClient) -> None:
    assert replied(await send(every_scheme, auth=("ada", "lovelace"))) == "ada/basic"
    assert (await send(every_scheme, auth=("ada", "babbage"))).status_code == 401
    garbled = {"Authorization": "Basic !!!"}
    assert (await send(every_scheme, headers=garbled)).status_code == 401


async def test_opaque_and_jwt_bearer_tokens(
    every_scheme: httpx.AsyncClient, issuer: TokenIssuer
) -> None:
    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    assert replied(await send(every_scheme, headers=bearer("opaque-token"))) == "svc/bearer"
    # The first scheme the token satisfies names the caller (jwt before oauth2 and oidc).
    assert replied(await send(every_scheme, headers=bearer(issuer.token("eve")))) == "eve/jwt"
    assert (await send(every_scheme, headers=bearer("opaque-wrong"))).status_code == 401


async def test_tokens_not_signed_by_the_issuers_keys_are_refused(
    every_scheme: httpx.AsyncClient, issuer: TokenIssuer
) -> None:
    claims = jwt.decode(issuer.token(), options={"verify_signature": False})
    forged = [
        jwt.encode(
            claims,
            "a-shared-secret-long-enough-for-sha256",
            algorithm="HS256",
            headers={"kid": "ec-1"},
        ),
        jwt.encode(claims, None, algorithm="none", headers={"kid": "ec-1"}),
        issuer.token()[:-8] + "AAAAAAAA",
    ]
    for token in forged:
        response = await send(every_scheme, headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 401, token


async def test_a_rotated_key_is_fetched_once_and_discovery_is_cached(
    issuer: TokenIssuer,
) -> None:
    oidc = OpenIdConnect(issuer.discovery_url, audience=AUDIENCE, key_refresh_interval=0)
    security = Security(oidc)
    with served(agent(security).app()) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            before = issuer.discovery_fetches, issuer.jwks_fetches
            for _ in range(3):
                token = issuer.token("carol")
                assert replied(await send(http, headers={"Authorization": f"Bearer {token}"}))
            issuer.add_key("ec-rotated")
            rotated = issuer.token("dave", kid="ec-rotated")
            answer = await send(http, headers={"Authorization": f"Bearer {rotated}"})
            assert replied(answer) == "dave/oidc"
    assert issuer.discovery_fetches - before[0] == 1
    assert issuer.jwks_fetches - before[1] == 2  # the first use, then once for the new key


async def test_an_and_requirement_needs_every_scheme(issuer: TokenIssuer) -> None:
    security = Security(ApiKey({"k": "team"}), Basic(passwords), require=[["apiKey", "basic"]])
    with served(agent(security).app()) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            key = {"X-API-Key": "k"}
            assert (await send(http, headers=key)).status_code == 401
            assert (await send(http, auth=("ada", "lovelace"))).status_code == 401
            both = await send(http, headers=key, auth=("ada", "lovelace"))
            assert replied(both) == "team/apiKey+basic"


async def test_skills_and_the_policy_authorize(issuer: TokenIssuer) -> None:
    def office_hours(principal: Principal, operation: str, inbound: Inbound) -> bool:
        return not (principal.id == "night-owl" and operation == "send_message")

    security = Security(
        Bearer(jwt=JwtCheck(issuer.jwks_url, audience=AUDIENCE)), policy=office_hours
    )
    skill = AgentSkill(
        id="audit", name="Audit", description="Audits", tags=[], security=[{"bearer": ["audit"]}]
    )
    with served(agent(security, skills=[skill]).app()) as url:
        async with httpx.AsyncClient(base_url=url) as http:

            async def as_(subject: str, *scopes: str) -> httpx.Response:
                token = issuer.token(subject, scopes=scopes)
                return await send(http, headers={"Authorization": f"Bearer {token}"})

            assert replied(await as_("auditor", "audit")) == "auditor/bearer"
            lacking = await as_("intern")
            assert lacking.status_code == 403
            assert lacking.json()["error"]["code"] == -32041
            assert "audit" in lacking.json()["error"]["message"]
            assert (await as_("night-owl", "audit")).status_code == 403


async def test_the_0_2_extended_card_needs_credentials(issuer: TokenIssuer) -> None:
    security = Security(ApiKey({"k": "team"}))
    extended = echo.agent.card("").model_copy(update={"name": "Members only"})
    with served(agent(security, extended_card=extended).app()) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            refused = await http.get("/agent/authenticatedExtendedCard")
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"] == 'ApiKey header="X-API-Key"'
            assert refused.json()["error"]["code"] == -32040
            card = await http.get("/agent/authenticatedExtendedCard", headers={"X-API-Key": "k"})
            assert card.status_code == 200
            assert card.json()["name"] == "Members only"


def test_requirements_name_declared_schemes_only() -> None:
    with pytest.raises(ValueError, match="undeclared"):
        Security(ApiKey({"k": "a"}), require=["bearer"])
    with pytest.raises(ValueError, match="share a name"):
        Security(ApiKey({"k": "a"}), ApiKey({"j": "b"}))
    with pytest.raises(ValueError, match="no way to authenticate"):
        Security(ApiKey({"k": "a"}), require=[])


def test_basic_header_helper_encodes_as_httpx_does() -> None:
    assert base64.b64encode(b"ada:lovelace").decode() == "YWRhOmxvdmVsYWNl"


async def test_operation_scopes_apply_to_every_version_0_1_included() -> None:
    security = Security(ApiKey({"k": "team"}), scopes={"send_message": ["write"]})
    message = {"role": "user", "parts": [{"type": "text", "text": "hi"}]}
    calls = {
        "tasks/send": {"id": "t1", "message": message},  # 0.1
        "message/send": {"message": {**message, "kind": "message", "messageId": "m"}},
    }
    with served(agent(security).app()) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            for method, params in calls.items():
                body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
                anonymous = await http.post("/", json=body)
                assert anonymous.status_code == 401, method
                keyed = await http.post("/", json=body, headers={"X-API-Key": "k"})
                assert keyed.status_code == 403, method
                assert "send_message needs the scope(s) write" in keyed.text
            get = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "nope"}}
            found = await http.post("/", json=get, headers={"X-API-Key": "k"})
    assert found.json()["error"]["code"] == -32001  # authorized; the task is unknown


async def test_the_agents_own_routes_need_credentials_too() -> None:
    async def report(request: Request) -> PlainTextResponse:
        return PlainTextResponse(f"report for {request.state.principal.id}")

    security = Security(ApiKey({"k": "team"}))
    guarded = agent(security, routes=[Route("/files/report.txt", report)])
    with served(guarded.app()) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            refused = await http.get("/files/report.txt")
            allowed = await http.get("/files/report.txt", headers={"X-API-Key": "k"})
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == 'ApiKey header="X-API-Key"'
    assert allowed.text == "report for team"
