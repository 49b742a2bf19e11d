"""accord's Client presenting credentials as the agent's card asks, over every binding and
version: API keys (header, query), Basic, bearer tokens, OAuth 2.0 client credentials (a token
from a real issuer, cached and renewed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import accord
from accord import RequestContext
from accord.auth import ApiKey, Basic, InvalidCredential, OAuth2, Scheme, Security
from accord.auth.http import authorization, bearer_challenge
from accord.client import ApiKey as Key
from accord.client import (
    BasicAuth,
    BearerToken,
    Client,
    ClientCredentials,
    Credentials,
)
from accord.client.keepalive import KeepAliveTransport
from accord.core import Inbound, Principal
from accord.errors import A2AClientError, Unauthenticated
from accord.types import (
    ClientCredentialsOAuthFlow,
    Message,
    OAuth2SecurityScheme,
    OAuthFlows,
    SecurityScheme,
)
from rpc import served
from token_issuer import TokenIssuer, running_issuer

INTERFACES = [
    ("JSONRPC", "1.0"),
    ("JSONRPC", "0.3"),
    ("HTTP+JSON", "1.0"),
    ("HTTP+JSON", "0.3"),
    ("GRPC", "1.0"),
    ("GRPC", "0.3"),
]


@accord.agent
def whoami(context: RequestContext) -> str:
    """Names the caller."""
    return f"{context.principal.id}/{context.principal.scheme}"


@pytest.fixture(scope="module")
def issuer() -> Iterator[TokenIssuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def url(issuer: TokenIssuer) -> Iterator[str]:
    security = Security(
        ApiKey({"key-a": "team-a"}),
        ApiKey({"key-q": "team-q"}, parameter="key", location="query", name="queryKey"),
        Basic(lambda user, password: user if password == "pw" else None),
        OAuth2(
            token_url=issuer.token_url,
            scopes={"a2a": "use the agent"},
            jwks_url=issuer.jwks_url,
            issuer=issuer.url,
            audience=None,
        ),
        require=["apiKey", "queryKey", "basic", {"oauth2": ["a2a"]}],
    )
    agent = accord.Agent(whoami.executor, name="Guarded", security=security)
    with served(agent.app(grpc_port=0)) as base_url:
        yield base_url


async def ask(client: Client) -> str:
    reply = await client.send("who am I?")
    assert isinstance(reply, Message)
    return reply.text


def keep_alive(wanted: bool) -> KeepAliveTransport | None:
    return KeepAliveTransport() if wanted else None


OVER_KEEP_ALIVE = [(transport, version, False) for transport, version in INTERFACES] + [
    (transport, version, True) for transport, version in INTERFACES if transport != "GRPC"
]
"""Each interface, and the HTTP ones over KeepAliveTransport too (requests sent straight)."""


@pytest.mark.parametrize(("transport", "version", "kept_alive"), OVER_KEEP_ALIVE)
async def test_each_credential_over_each_interface(
    url: str, issuer: TokenIssuer, transport: str, version: str, kept_alive: bool
) -> None:
    given = {
        "team-a/apiKey": Key("key-a"),
        "team-q/queryKey": Key("key-q", scheme="queryKey"),
        "ada/basic": BasicAuth("ada", "pw"),
        "robot/oauth2": ClientCredentials("robot", "robot-secret"),
    }
    for expected, credential in given.items():
        async with Client(
            url,
            credentials=[credential],
            transport=transport,
            version=version,
            http_transport=keep_alive(kept_alive),
        ) as client:
            assert await ask(client) == expected, credential


async def test_a_client_credentials_token_is_cached_and_renewed_before_expiry(
    url: str, issuer: TokenIssuer
) -> None:
    cached = ClientCredentials("robot", "robot-secret")
    before = issuer.issued
    async with Client(url, credentials=[cached]) as client:
        for _ in range(3):
            assert await ask(client) == "robot/oauth2"
    assert issuer.issued - before == 1
    # A token living no longer than the refresh margin is fetched again for every call.
    issuer.token_lifetime = 30
    try:
        renewing = ClientCredentials("robot", "robot-secret", refresh_margin=30)
        async with Client(url, credentials=[renewing]) as client:
            for _ in range(3):
                assert await ask(client) == "robot/oauth2"
        assert renewing.tokens.fetched == 3
    finally:
        issuer.token_lifetime = 300


async def test_credentials_the_card_does_not_ask_for_are_a_clear_error(url: str) -> None:
    async with Client(url, credentials=Credentials(BearerToken("t", scheme="other"))) as client:
        with pytest.raises(A2AClientError, match="asks for apiKey \\(an API key in the header"):
            await client.send("hi")


async def test_wrong_credentials_are_unauthenticated_naming_the_schemes(url: str) -> None:
    async with Client(url, credentials=[Key("guess")], transport="GRPC") as client:
        with pytest.raises(Unauthenticated, match="apiKey: the API key in X-API-Key is not valid"):
            await client.send("hi")
    async with Client(url) as client:
        with pytest.raises(Unauthenticated, match="requires authentication: apiKey, or queryKey"):
            await client.send("hi")


async def test_a_wrong_client_secret_says_so(url: str) -> None:
    async with Client(url, credentials=[ClientCredentials("robot", "nope")]) as client:
        with pytest.raises(A2AClientError, match="refused a token to robot: invalid_client"):
            await client.send("hi")


def test_credentials_need_the_clients_own_http_client() -> None:
    import httpx

    with pytest.raises(ValueError, match="own HTTP client"):
        Client("http://x", http_client=httpx.AsyncClient(), credentials=[Key("k")])


class Introspected(Scheme):
    """OAuth 2.0 whose tokens the agent checks against the issuer's live set, as token
    introspection would: a revoked token is refused though it has not expired."""

    name = "oauth2"

    def __init__(self, issuer: TokenIssuer) -> None:
        self.issuer = issuer

    def card_entry(self) -> SecurityScheme:
        flow = ClientCredentialsOAuthFlow(token_url=self.issuer.token_url, scopes={})
        return OAuth2SecurityScheme(flows=OAuthFlows(client_credentials=flow))

    def challenge(self, error: str | None = None) -> str:
        return bearer_challenge(error)

    async def authenticate(self, inbound: Inbound) -> Principal | None:
        token = authorization(inbound, "Bearer")
        if token is None:
            return None
        if token not in self.issuer.active:
            raise InvalidCredential("the token was revoked")
        return Principal("robot", scheme=self.name)


@pytest.mark.parametrize(
    ("transport", "kept_alive"),
    [
        ("JSONRPC", False),
        ("HTTP+JSON", False),
        ("GRPC", False),
        ("JSONRPC", True),
        ("HTTP+JSON", True),
    ],
)
async def test_a_refused_cached_token_is_fetched_again_once(
    issuer: TokenIssuer, transport: str, kept_alive: bool
) -> None:
    agent = accord.Agent(whoami.executor, name="Strict", security=Security(Introspected(issuer)))
    with served(agent.app(grpc_port=0)) as url:
        robot = ClientCredentials("robot", "robot-secret")
        async with Client(
            url, credentials=[robot], transport=transport, http_transport=keep_alive(kept_alive)
        ) as client:
            assert await ask(client) == "robot/oauth2"
            issuer.active.clear()  # revoked
            assert await ask(client) == "robot/oauth2"
        assert robot.tokens.fetched == 2
