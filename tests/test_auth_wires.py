"""Authentication and authorization on every operation of every binding and version: a real
token issuer (OpenID Connect discovery, JWKS) and API keys; each bad credential refused right."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator

import grpc
import pytest

import accord
from accord import Agent, RequestContext
from accord.auth import ApiKey, OpenIdConnect, Security
from accord.grpc.generated.v1_0 import a2a_pb2 as pb10
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as rpc10
from accord.server.limits import Limits
from agents_for_tests import EXTENDED_CARD
from operations import WIRES, Server, Wire, connect_wire
from test_operations import SWITCHBOARD, serve
from token_issuer import AUDIENCE, TokenIssuer, running_issuer
from wire_facts import Refused

API_KEYS = {f"key-of-{kind.name}": kind.name for kind in WIRES}
"""One caller per wire, so that no caller comes near the default rate limit."""


@accord.agent
def who_called(context: RequestContext) -> str:
    """Says who called, as the server authenticated them."""
    principal = context.principal
    return f"{principal.id} via {principal.scheme} with {' '.join(sorted(principal.scopes))}"


SWITCHBOARD.routes["whoami"] = who_called.executor


@pytest.fixture(scope="module")
def issuer() -> Iterator[TokenIssuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def server(issuer: TokenIssuer) -> Iterator[Server]:
    """An agent open to OpenID Connect tokens granting `a2a`, or to team A's API key;
    cancelling needs the `admin` scope too."""
    security = Security(
        OpenIdConnect(issuer.discovery_url, audience=AUDIENCE),
        ApiKey(API_KEYS),
        require=[{"oidc": ["a2a"]}, "apiKey"],
        scopes={"cancel_task": ["admin"]},
    )
    agent = Agent(
        SWITCHBOARD,
        name="Protected agent",
        push_notifications=True,
        extended_card=EXTENDED_CARD,
        security=security,
    )
    # Every test here fails authentication on purpose, many times from one address.
    with serve(agent, limits=Limits(failed_authentications_per_second=None)) as served:
        yield served


Operation = Callable[[Wire], Awaitable[object]]


async def _stream(wire: Wire) -> None:
    async with wire.stream("hello"):
        pass


async def _subscribe(wire: Wire) -> None:
    async with wire.subscribe("no-such-task"):
        pass


OPERATIONS: dict[str, Operation] = {
    "send": lambda wire: wire.send("hello"),
    "stream": _stream,
    "get": lambda wire: wire.get_task("no-such-task"),
    "cancel": lambda wire: wire.cancel("no-such-task"),
    "subscribe": _subscribe,
    "list_tasks": lambda wire: wire.list_tasks(),
    "set_push": lambda wire: wire.set_push("no-such-task", "c1", "https://x.example/h", "t"),
    "get_push": lambda wire: wire.get_push("no-such-task", "c1"),
    "list_push": lambda wire: wire.list_push("no-such-task"),
    "delete_push": lambda wire: wire.delete_push("no-such-task", "c1"),
    "extended_card": lambda wire: wire.extended_card_name(),
}


def operations_of(wire: Wire) -> dict[str, Operation]:
    return {name: run for name, run in OPERATIONS.items() if name not in wire.lacks}


async def refusals(wire: Wire) -> dict[str, str]:
    """Each operation's refusal reason ("ok" when it ran, or failed for another reason than
    its credentials: the operation itself answered)."""
    found = {}
    for name, run in operations_of(wire).items():
        try:
            await run(wire)
            found[name] = "ok"
        except Refused as refused:
            auth = refused.reason in ("UNAUTHENTICATED", "PERMISSION_DENIED")
            found[name] = refused.reason if auth else "ok"
    return found


@pytest.fixture(params=[pytest.param(kind, id=kind.name) for kind in WIRES])
def kind(request: pytest.FixtureRequest) -> type[Wire]:
    kind: type[Wire] = request.param
    return kind


Headers = Callable[[TokenIssuer], dict[str, str]]
REFUSED: dict[str, tuple[Headers, str]] = {
    "no credentials": (lambda issuer: {}, "UNAUTHENTICATED"),
    "a wrong API key": (lambda issuer: {"X-API-Key": "guess"}, "UNAUTHENTICATED"),
    "a garbled token": (lambda issuer: {"Authorization": "Bearer not.a.jwt"}, "UNAUTHENTICATED"),
    "an expired token": (
        lambda issuer: {"Authorization": f"Bearer {issuer.token(expires_in=-120)}"},
        "UNAUTHENTICATED",
    ),
    "a token for another audience": (
        lambda issuer: {"Authorization": f"Bearer {issuer.token(audience='https://else')}"},
        "UNAUTHENTICATED",
    ),
    "a token from another issuer": (
        lambda issuer: {"Authorization": f"Bearer {issuer.token(issuer='https://evil')}"},
        "UNAUTHENTICATED",
    ),
    "a token without the scope": (
        lambda issuer: {"Authorization": f"Bearer {issuer.token(scopes=('other',))}"},
        "PERMISSION_DENIED",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
async def test_every_operation_refuses_bad_credentials(
    kind: type[Wire], server: Server, issuer: TokenIssuer, case: str
) -> None:
    headers, reason = REFUSED[case]
    async with connect_wire(kind, server, headers(issuer)) as wire:
        found = await refusals(wire)
    assert found == dict.fromkeys(operations_of(wire), reason)


async def test_a_valid_token_with_the_scope_reaches_every_operation(
    kind: type[Wire], server: Server, issuer: TokenIssuer
) -> None:
    token = issuer.token(kind.name, scopes=("a2a", "admin"), kid="rsa-1")
    async with connect_wire(kind, server, {"Authorization": f"Bearer {token}"}) as wire:
        found = await refusals(wire)
    assert found == dict.fromkeys(operations_of(wire), "ok")


async def test_an_api_key_reaches_every_operation_but_one_needing_a_scope(
    kind: type[Wire], server: Server
) -> None:
    async with connect_wire(kind, server, {"X-API-Key": f"key-of-{kind.name}"}) as wire:
        found = await refusals(wire)
    assert found == {**dict.fromkeys(operations_of(wire), "ok"), "cancel": "PERMISSION_DENIED"}


async def test_the_agent_sees_who_called(
    kind: type[Wire], server: Server, issuer: TokenIssuer
) -> None:
    token = issuer.token("bob", scopes=("a2a",))
    async with connect_wire(kind, server, {"Authorization": f"Bearer {token}"}) as wire:
        reply = await wire.send("whoami")
    assert reply.text == "bob via oidc with a2a"


async def test_a_grpc_refusal_names_the_schemes_in_its_trailers(server: Server) -> None:
    async with grpc.aio.insecure_channel(server.grpc_target) as channel:
        stub = rpc10.A2AServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.GetTask(pb10.GetTaskRequest(id="t"))
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
    trailers = dict(refused.value.trailing_metadata() or ())
    assert trailers["www-authenticate"] == 'Bearer realm="a2a", ApiKey header="X-API-Key"'
