"""Security set up wrong: empty keys, caller ids, names, URLs and audiences are refused when the
scheme is made; a verifier naming an empty caller refuses the request instead of failing."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import accord
from accord import RequestContext
from accord.auth import ApiKey, Basic, Bearer, JwtCheck, OAuth2, OpenIdConnect, Security
from rpc import served

JWKS = "https://issuer.example/jwks.json"
GET_TASK = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}}
V1 = {"A2A-Version": "1.0"}


def nobody(*credentials: str) -> str:
    """A verifier that accepts every credential but names an empty caller."""
    return ""


MISTAKES: dict[str, tuple[Callable[[], Any], str]] = {
    "api key mapped to an empty caller id": (
        lambda: ApiKey({"some-key": ""}),
        "map 1 key(s) to an empty caller id",
    ),
    "empty api key": (lambda: ApiKey({"": "alice"}), "include an empty key"),
    "empty api key parameter": (lambda: ApiKey(verify=nobody, parameter=""), "parameter"),
    "empty scheme name": (lambda: Security(Basic(nobody, name="")), "a scheme's name is empty"),
    "empty JWKS URL": (lambda: JwtCheck("", audience="agent"), "the JWKS URL is empty"),
    "empty issuer": (lambda: JwtCheck(JWKS, issuer="", audience="agent"), "the issuer is empty"),
    "empty audience": (lambda: JwtCheck(JWKS, audience=""), "the audience is empty"),
    "empty audience in a list": (lambda: JwtCheck(JWKS, audience=["a", ""]), "an audience"),
    "no audience in a list": (lambda: JwtCheck(JWKS, audience=[]), "the audience list is empty"),
    "empty OAuth2 token URL": (
        lambda: OAuth2(token_url="", jwks_url=JWKS, audience="agent"),
        "OAuth2's token_url is empty",
    ),
    "empty OAuth2 metadata URL": (
        lambda: OAuth2(token_url="https://t", metadata_url="", audience="agent"),
        "the discovery document's URL is empty",
    ),
    "empty OpenID Connect URL": (
        lambda: OpenIdConnect("", audience="agent"),
        "the discovery document's URL is empty",
    ),
}


@pytest.mark.parametrize("mistake", MISTAKES.values(), ids=list(MISTAKES))
def test_a_mistake_is_refused_when_the_scheme_is_made(
    mistake: tuple[Callable[[], Any], str],
) -> None:
    make, says = mistake
    with pytest.raises(ValueError, match=re.escape(says)):
        make()


def test_the_api_key_error_does_not_repeat_the_keys() -> None:
    with pytest.raises(ValueError) as refused:
        ApiKey({"the-secret-key": "", "another-secret": "bob"})
    assert "secret" not in str(refused.value)


@accord.agent
def whoami(context: RequestContext) -> str:
    """Names the caller."""
    return context.principal.id


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize(
    ("scheme", "headers"),
    [
        (ApiKey(verify=nobody), {"X-API-Key": "any-key"}),
        (Basic(nobody), {"Authorization": basic("ada", "lovelace")}),
        (Bearer(nobody), {"Authorization": "Bearer any-token"}),
    ],
    ids=["apiKey", "basic", "bearer"],
)
def test_a_verifier_naming_an_empty_caller_refuses_the_request(
    scheme: ApiKey | Basic | Bearer, headers: dict[str, str]
) -> None:
    agent = accord.Agent(whoami.executor, name="Guarded", security=Security(scheme))
    with served(agent.app()) as url:
        rpc = httpx.post(url + "/", json=GET_TASK, headers={**V1, **headers})
        rest = httpx.get(url + "/tasks/nope", headers={**V1, **headers})
    assert rpc.status_code == rest.status_code == 401, rpc.text
    assert f"{scheme.name} credential is not valid" in rpc.json()["error"]["message"]
    assert rest.json()["error"]["status"] == "UNAUTHENTICATED"
