"""Malformed bearer tokens on every binding of a real agent backed by a real token issuer:
whatever a token's header and claims hold (any JSON, any unicode, a key id that is no string,
signed or not), the caller gets 401 / UNAUTHENTICATED (or 429 / RESOURCE_EXHAUSTED once it
failed too often), never a 5xx, an internal error or a dropped connection (a drawn token that
is in fact valid reaches the operation); a refused token
counts toward the failed-authentication limit; a key set that cannot be fetched is logged,
and the caller is told only that the token could not be verified."""

from __future__ import annotations

import base64
import json
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
import jwt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jwt.algorithms import ECAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

import accord
from accord.auth import Bearer, JwtCheck, OAuth2, OpenIdConnect, Security
from accord.auth.tokens import ASYMMETRIC_ALGORITHMS
from accord.grpc.generated.v1_0 import a2a_pb2 as pb10
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as rpc10
from accord.samples import echo
from accord.server.limits import Limits
from agents_for_tests import SAFETY_TIMEOUT
from live_server import serve_app
from test_operations import serve
from token_issuer import AUDIENCE, TokenIssuer, running_issuer

EXAMPLES = settings(
    max_examples=int(os.environ.get("ACCORD_FUZZ_EXAMPLES", "60")),  # as tests/test_fuzz.py
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# --- tokens ----------------------------------------------------------------------------------

_NASTY_TEXT = ["", "ec-1", "rsa-1", "ES256", "RS256", "none", "HS256", "κλειδί", "🔑", "\n\r",
               "a\r\nX-Injected: 1", "é" * 3, "\x00", "k" * 4000, "ES256\n"]  # fmt: skip
texts = st.one_of(st.sampled_from(_NASTY_TEXT), st.text(max_size=40))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), texts)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)),
    max_leaves=8,
)
KIDS = ["ec-1", "rsa-1", "unknown"]
HEADER_MEMBERS = ("alg", "kid", "typ", "crit", "b64", "jku", "x5c", "cty")
CLAIMS = ("sub", "client_id", "azp", "iss", "aud", "exp", "nbf", "iat", "scope", "scp")


@st.composite
def headers(draw: st.DrawFn) -> Any:
    """A JOSE header: mostly an object whose usual members hold anything, now and then any
    JSON at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    algorithm = st.one_of(st.sampled_from(ASYMMETRIC_ALGORITHMS), json_values)
    header: dict[str, Any] = {"alg": draw(algorithm), "kid": draw(st.sampled_from(KIDS))}
    for member in draw(st.lists(st.sampled_from(HEADER_MEMBERS), max_size=4)):
        header[member] = draw(json_values)
    header.update(draw(st.dictionaries(texts, json_values, max_size=2)))
    return header


@st.composite
def claims(draw: st.DrawFn, issuer: TokenIssuer) -> Any:
    """Claims that now and then would pass, with members replaced by anything."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    body: dict[str, Any] = {"iss": issuer.url, "aud": AUDIENCE, "sub": "alice", "exp": 2**40}
    for claim in draw(st.lists(st.sampled_from(CLAIMS), max_size=4)):
        body[claim] = draw(json_values)
    return body


def _segment(value: Any) -> str:
    data = json.dumps(value).encode() if not isinstance(value, bytes) else value
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@st.composite
def tokens(draw: st.DrawFn, issuer: TokenIssuer) -> str:
    """A compact JWS with a drawn header and claims: signed with the issuer's real key (so
    every check past the signature runs), with garbage, or not at all."""
    signing_input = f"{_segment(draw(headers()))}.{_segment(draw(claims(issuer)))}"
    how = draw(st.sampled_from(["signed", "garbage", "unsigned"]))
    if how == "signed":
        key, _ = issuer.keys["ec-1"]
        signature = ECAlgorithm(ECAlgorithm.SHA256).sign(signing_input.encode(), key)
        return f"{signing_input}.{_segment(signature)}"
    if how == "garbage":
        return f"{signing_input}.{_segment(draw(st.binary(max_size=80)))}"
    return f"{signing_input}."


# --- the agent, on every binding -------------------------------------------------------------


@dataclass
class Bindings:
    """A served agent's HTTP base URL and gRPC channel."""

    http: httpx.Client
    grpc: grpc.Channel


@contextmanager
def bindings(security: Security, limits: Limits) -> Iterator[Bindings]:
    """The echo agent behind `security`, served on loopback HTTP and gRPC."""
    agent = accord.Agent(echo.agent.executor, name="Guarded echo", security=security)
    with (
        serve(agent, limits=limits) as server,
        httpx.Client(base_url=server.base_url, timeout=SAFETY_TIMEOUT) as http,
        grpc.insecure_channel(server.grpc_target) as channel,
    ):
        yield Bindings(http, channel)


@pytest.fixture(scope="module")
def issuer() -> Iterator[TokenIssuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def agent(issuer: TokenIssuer) -> Iterator[Bindings]:
    """Tokens from the issuer as bearer JWTs (keys from its JWKS) or as OAuth 2.0 access
    tokens (keys and issuer from its metadata); no limit on failed authentications, so that
    every example reaches the token checks."""
    security = Security(
        Bearer(jwt=JwtCheck(issuer.jwks_url, issuer=issuer.url, audience=AUDIENCE)),
        OAuth2(token_url=issuer.token_url, metadata_url=issuer.discovery_url, audience=AUDIENCE),
    )
    with bindings(security, Limits(failed_authentications_per_second=None)) as served:
        yield served


RPC_BODY = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t-1"}}


def jsonrpc(agent: Bindings, token: str) -> httpx.Response:
    return agent.http.post("/", json=RPC_BODY, headers={"Authorization": f"Bearer {token}"})


def http_json(agent: Bindings, token: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    return agent.http.get("/tasks/t-1", headers=headers)


def grpc_call(agent: Bindings, token: str) -> grpc.RpcError:
    stub = rpc10.A2AServiceStub(agent.grpc)
    try:
        stub.GetTask(
            pb10.GetTaskRequest(id="t-1"),
            metadata=(("authorization", f"Bearer {token}"),),
            timeout=SAFETY_TIMEOUT,
        )
    except grpc.RpcError as error:
        return error
    raise AssertionError("a malformed token was accepted")


def assert_http_refusal(response: httpx.Response) -> None:
    """401 with a one-line ASCII challenge (or 429), and the protocol's error."""
    assert response.status_code in (401, 429), (response.status_code, response.text)
    if response.status_code == 401:
        challenge = response.headers["www-authenticate"]
        assert challenge.isascii() and challenge.isprintable(), challenge
        assert "\n" not in challenge and "\r" not in challenge


# --- the properties --------------------------------------------------------------------------


def verifies(issuer: TokenIssuer, token: str) -> bool:
    """Whether `token` is one the agent should accept, by PyJWT's own reading: ES256 by the
    issuer's key `ec-1`, for the agent's audience, from the issuer, unexpired, naming a caller.
    Drawn tokens that pass (every member left as it was) reach the operation itself."""
    key, _ = issuer.keys["ec-1"]
    try:
        if jwt.get_unverified_header(token).get("kid") != "ec-1":
            return False
        claims = jwt.decode(
            token,
            key.public_key(),
            algorithms=["ES256"],
            audience=AUDIENCE,
            issuer=issuer.url,
            leeway=30,
            options={"require": ["exp"]},
        )
    except Exception:
        return False
    subject = claims.get("sub") or claims.get("client_id") or claims.get("azp")
    return isinstance(subject, str) and bool(subject)


def answered_on_json_rpc(agent: Bindings, token: str) -> bool:
    """Whether the token got through JSON-RPC (the task was not found), else checks that it
    was refused as unauthenticated (or rate-limited)."""
    response = jsonrpc(agent, token)
    if response.json()["error"]["code"] == -32001:  # TaskNotFound
        return True
    assert_http_refusal(response)
    assert response.json()["error"]["code"] in (-32040, -32042), response.text
    return False


def answered_on_http_json(agent: Bindings, token: str) -> bool:
    response = http_json(agent, token)
    if response.status_code == 404:
        return True
    assert_http_refusal(response)
    assert response.json()["error"]["status"] in ("UNAUTHENTICATED", "RESOURCE_EXHAUSTED")
    return False


def answered_on_grpc(agent: Bindings, token: str) -> bool:
    error = grpc_call(agent, token)
    if error.code() == grpc.StatusCode.NOT_FOUND:
        return True
    assert error.code() in (
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    ), (error.code(), error.details())
    return False


@pytest.mark.parametrize(
    "answered",
    [answered_on_json_rpc, answered_on_http_json, answered_on_grpc],
    ids=["json-rpc", "http-json", "grpc"],
)
@given(data=st.data())
@EXAMPLES
def test_any_token_is_refused_as_unauthenticated_unless_it_verifies(
    agent: Bindings,
    issuer: TokenIssuer,
    answered: Callable[[Bindings, str], bool],
    data: st.DataObject,
) -> None:
    token = data.draw(tokens(issuer))
    assert answered(agent, token) == verifies(issuer, token), token


# --- the tokens that used to break it, named ---------------------------------------------------

KEY_ID_NOT_A_STRING = {"alg": "ES256", "kid": 7}
NOT_LATIN_1 = [{"alg": "Ω-256", "kid": "ec-1"}, {"alg": "ES256", "kid": "ключ-🔑"}]
KEY_OF_ANOTHER_TYPE = [{"alg": "EdDSA", "kid": "ec-1"}, {"alg": "RS256", "kid": "ec-1"}]


def token_with(issuer: TokenIssuer, header: dict[str, Any]) -> str:
    claims_ = {"iss": issuer.url, "aud": AUDIENCE, "sub": "alice", "exp": 2**40}
    signing_input = f"{_segment(header)}.{_segment(claims_)}"
    key, _ = issuer.keys["ec-1"]
    signature = ECAlgorithm(ECAlgorithm.SHA256).sign(signing_input.encode(), key)
    return f"{signing_input}.{_segment(signature)}"


@pytest.mark.parametrize(
    "header", [KEY_ID_NOT_A_STRING, *NOT_LATIN_1, *KEY_OF_ANOTHER_TYPE], ids=str
)
def test_a_token_header_that_broke_the_server_is_a_401_on_every_binding(
    agent: Bindings, issuer: TokenIssuer, header: dict[str, Any]
) -> None:
    token = token_with(issuer, header)
    for response in (jsonrpc(agent, token), http_json(agent, token)):
        assert response.status_code == 401, response.text
        assert_http_refusal(response)
    assert grpc_call(agent, token).code() == grpc.StatusCode.UNAUTHENTICATED


def test_malformed_tokens_count_toward_the_failed_authentication_limit(
    issuer: TokenIssuer,
) -> None:
    security = Security(Bearer(jwt=JwtCheck(issuer.jwks_url, issuer=issuer.url, audience=AUDIENCE)))
    limits = Limits(failed_authentications_per_second=0.1)  # bursts of 0.2: one, then none
    token = token_with(issuer, KEY_ID_NOT_A_STRING)
    with bindings(security, limits) as agent:
        statuses = [jsonrpc(agent, token).status_code for _ in range(4)]
    assert statuses[0] == 401
    assert 429 in statuses, statuses


# --- a key set that cannot be fetched ---------------------------------------------------------

FAILURE_TEXT = "upstream trace\nline two: secret-internal-detail\r\nline three"


@pytest.fixture(scope="module")
def broken_issuer() -> Iterator[str]:
    """An issuer whose every document (discovery, JWKS) answers 500 with a multi-line body."""

    async def broken(request: Request) -> PlainTextResponse:
        return PlainTextResponse(FAILURE_TEXT, status_code=500)

    routes = [Route(path, broken) for path in ("/jwks.json", "/.well-known/openid-configuration")]
    with serve_app(Starlette(routes=routes)) as url:
        yield url


@pytest.mark.parametrize("scheme", ["jwks", "discovery"])
def test_a_key_set_answering_500_refuses_with_a_clean_401_and_logs_the_reason_once(
    issuer: TokenIssuer, broken_issuer: str, scheme: str, caplog: pytest.LogCaptureFixture
) -> None:
    if scheme == "jwks":
        check = Bearer(jwt=JwtCheck(f"{broken_issuer}/jwks.json", audience=AUDIENCE))
    else:
        check = OpenIdConnect(
            f"{broken_issuer}/.well-known/openid-configuration", audience=AUDIENCE
        )
    caplog.set_level(logging.WARNING, logger="accord.auth")
    token = issuer.token()
    with bindings(Security(check), Limits(failed_authentications_per_second=None)) as agent:
        answers = [jsonrpc(agent, token), http_json(agent, token), jsonrpc(agent, token)]
        error = grpc_call(agent, token)

    for response in answers:
        assert response.status_code == 401, response.text
        assert_http_refusal(response)
        for told in (response.text, response.headers["www-authenticate"]):
            assert "could not be verified" in told
            assert broken_issuer not in told and "secret-internal-detail" not in told
            assert "500" not in told
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert broken_issuer not in (error.details() or "")
    logged = [r.getMessage() for r in caplog.records if r.name == "accord.auth"]
    assert len(logged) == 1, logged
    assert broken_issuer in logged[0] and "500" in logged[0]
