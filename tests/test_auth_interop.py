"""Credentials across implementations: the official a2a-sdk client with a bearer token or an
API key against a protected accord server, and accord's client against an a2a-sdk server that
checks credentials."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import jwt
import pytest
from a2a import types as sdk
from a2a.client import AuthInterceptor, ClientCallContext, CredentialService
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

import accord
from accord import RequestContext
from accord.auth import ApiKey, OpenIdConnect, Security
from accord.client import Client, ClientCredentials
from accord.errors import Unauthenticated
from accord.types import Message
from live_server import serve_app
from test_interop_official_client import (
    EVERY_INTERFACE,
    INTERFACE_IDS,
    official_client,
    request,
)
from test_interop_official_server import OfficialEcho
from token_issuer import AUDIENCE, TokenIssuer, running_issuer


@accord.agent
def whoami(context: RequestContext) -> str:
    """Names the caller."""
    return f"{context.principal.id}/{context.principal.scheme}"


@pytest.fixture(scope="module")
def issuer() -> Iterator[TokenIssuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def accord_url(issuer: TokenIssuer) -> Iterator[str]:
    security = Security(
        OpenIdConnect(issuer.discovery_url, audience=AUDIENCE), ApiKey({"sdk-key": "sdk-team"})
    )
    agent = accord.Agent(whoami.executor, name="Guarded", security=security)
    with serve_app(agent.app(grpc_port=0)) as url:
        yield url


class Given(CredentialService):
    """The SDK's credential service: one credential per scheme name."""

    def __init__(self, **credentials: str) -> None:
        self.credentials = credentials

    async def get_credentials(self, name: str, context: ClientCallContext | None) -> str | None:
        return self.credentials.get(name)


@asynccontextmanager
async def sdk_client(url: str, interface: tuple[str, str], service: Given) -> AsyncIterator[object]:
    async with official_client(
        url, interface, streaming=False, interceptors=[AuthInterceptor(service)]
    ) as client:
        yield client


async def reply_text(client: object) -> str:
    [event] = [e async for e in client.send_message(request("who am I?"))]  # type: ignore[attr-defined]
    return str(event.message.parts[0].text)


@pytest.mark.parametrize("interface", EVERY_INTERFACE, ids=INTERFACE_IDS)
async def test_the_official_client_with_a_token_or_a_key(
    accord_url: str, issuer: TokenIssuer, interface: tuple[str, str]
) -> None:
    token = Given(oidc=issuer.token("sdk-user"))
    async with sdk_client(accord_url, interface, token) as client:
        assert await reply_text(client) == "sdk-user/oidc"
    key = Given(apiKey="sdk-key")
    async with sdk_client(accord_url, interface, key) as client:
        assert await reply_text(client) == "sdk-team/apiKey"
    async with sdk_client(accord_url, interface, Given()) as client:
        with pytest.raises(Exception, match=r"(?i)authenticat|401"):
            await reply_text(client)


@contextmanager
def protected_official_server(issuer: TokenIssuer) -> Iterator[str]:
    """The a2a-sdk serving its echo over JSON-RPC and HTTP+JSON (1.0 and 0.3), behind a check
    of the issuer's tokens (the SDK declares schemes and leaves enforcement to its user); its
    card declares OAuth 2.0 client credentials at the issuer, scope `a2a`."""
    scheme = sdk.SecurityScheme(
        oauth2_security_scheme=sdk.OAuth2SecurityScheme(
            flows=sdk.OAuthFlows(
                client_credentials=sdk.ClientCredentialsOAuthFlow(
                    token_url=issuer.token_url, scopes={"a2a": "talk to the agent"}
                )
            )
        )
    )
    card = sdk.AgentCard(
        name="Official guarded echo",
        description="The official SDK behind a token check.",
        version="1.0.0",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=sdk.AgentCapabilities(streaming=True),
        skills=[sdk.AgentSkill(id="echo", name="Echo", description="Echoes.", tags=["echo"])],
        security_schemes={"oauth": scheme},
        security_requirements=[
            sdk.SecurityRequirement(schemes={"oauth": sdk.StringList(list=["a2a"])})
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=OfficialEcho(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = create_agent_card_routes(card)
    routes.extend(create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True))
    routes.extend(create_rest_routes(handler, enable_v0_3_compat=True))
    app = Starlette(routes=routes, middleware=[Middleware(TokenCheck, issuer=issuer)])
    with serve_app(app) as url:
        for binding, version in SDK_HTTP_INTERFACES:
            interface = sdk.AgentInterface(
                protocol_binding=binding, protocol_version=version, url=url
            )
            card.supported_interfaces.append(interface)
        yield url


class TokenCheck(BaseHTTPMiddleware):
    """401 for any request but the card's without a valid token of the issuer granting `a2a`."""

    def __init__(self, app: ASGIApp, issuer: TokenIssuer) -> None:
        super().__init__(app)
        key, _ = issuer.keys["ec-1"]
        self.public_key = key.public_key()
        self.issuer = issuer

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.url.path.startswith("/.well-known/"):
            return await call_next(request)
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        try:
            claims = jwt.decode(
                token, self.public_key, ["ES256"], audience=AUDIENCE, issuer=self.issuer.url
            )
        except jwt.InvalidTokenError:
            return Response(status_code=401, headers={"WWW-Authenticate": "Bearer"})
        if "a2a" not in claims.get("scope", "").split():
            return Response(status_code=403)
        return await call_next(request)


SDK_HTTP_INTERFACES = [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")]


@pytest.fixture(scope="module")
def official_url(issuer: TokenIssuer) -> Iterator[str]:
    with protected_official_server(issuer) as url:
        yield url


@pytest.mark.parametrize("interface", SDK_HTTP_INTERFACES, ids="-".join)
async def test_accords_client_fetches_a_token_for_the_official_server(
    official_url: str, issuer: TokenIssuer, interface: tuple[str, str]
) -> None:
    robot = ClientCredentials("robot", "robot-secret")
    transport, version = interface
    async with Client(
        official_url, credentials=[robot], transport=transport, version=version
    ) as client:
        for _ in range(2):
            reply = await client.send("reply hello")
            assert isinstance(reply, Message) and reply.text == "reply hello"
    assert robot.tokens.fetched == 1
    async with Client(official_url, transport=transport, version=version) as client:
        with pytest.raises(Unauthenticated, match=r"answered HTTP 401.*it accepts Bearer"):
            await client.send("reply hello")
