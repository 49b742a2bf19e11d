"""One request pipeline for every binding: a check added there applies to JSON-RPC, HTTP+JSON
and gRPC, in every version; hooks see each operation once; the agent sees who called."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import accord
from accord import Client
from accord.core import Inbound, Principal
from accord.errors import A2AError, PermissionDenied, Unauthenticated
from accord.server.pipeline import Call, Proceed, RequestPipeline
from accord.types import TransportProtocol
from live_server import serve_app

KEY_HEADER = "X-Test-Key"
INTERFACES = [
    (TransportProtocol.JSONRPC, "1.0"),
    (TransportProtocol.JSONRPC, "0.3"),
    (TransportProtocol.HTTP_JSON, "1.0"),
    (TransportProtocol.HTTP_JSON, "0.3"),
    (TransportProtocol.GRPC, "1.0"),
    (TransportProtocol.GRPC, "0.3"),
]


class KeyAuthenticator:
    """The check a newcomer adds: a key per caller in one header, `blocked` refused."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def authenticate(self, inbound: Inbound) -> Principal:
        self.seen.append((inbound.binding, inbound.method))
        key = inbound.headers.get(KEY_HEADER)
        if not key:
            raise Unauthenticated(
                f"send your key in {KEY_HEADER}", challenges=[f'ApiKey header="{KEY_HEADER}"']
            )
        if key == "blocked":
            raise PermissionDenied("this key may not call the agent")
        return Principal(key, scheme="testKey")


@accord.agent(name="Who am I", description="Says who called it.")
async def who_am_i(context: accord.RequestContext) -> AsyncIterator[str]:
    yield f"{context.principal.id} via {context.base_url is not None}"


@pytest.fixture(scope="module")
def authenticator() -> KeyAuthenticator:
    return KeyAuthenticator()


@pytest.fixture(scope="module")
def served(authenticator: KeyAuthenticator) -> Iterator[tuple[str, RequestPipeline]]:
    app = accord.create_app(who_am_i, authenticator=authenticator, grpc_port=0)
    with serve_app(app) as url:
        yield url, app.state.pipeline


def client(url: str, interface: tuple[TransportProtocol, str], key: str | None) -> Client:
    transport, version = interface
    headers = {KEY_HEADER: key} if key else {}
    return Client(url, headers=headers, transport=transport.value, version=version)


@pytest.mark.parametrize("interface", INTERFACES, ids=lambda i: f"{i[0].value}-{i[1]}")
async def test_the_authenticator_guards_every_binding_and_version(
    served: tuple[str, RequestPipeline],
    authenticator: KeyAuthenticator,
    interface: tuple[TransportProtocol, str],
) -> None:
    url, _ = served
    async with client(url, interface, key=None) as anonymous:
        with pytest.raises(Unauthenticated):
            await anonymous.send("hello")
    async with client(url, interface, key="blocked") as blocked:
        with pytest.raises(PermissionDenied):
            await blocked.send("hello")
    authenticator.seen.clear()
    async with client(url, interface, key="ada") as ada:
        task = await ada.send("hello")
        assert task.artifacts and task.artifacts[0].text == "ada via True"
        assert (await ada.get_task(task.id)).id == task.id
    assert [binding for binding, _ in authenticator.seen] == [_binding(interface[0])] * 2


def _binding(transport: TransportProtocol) -> str:
    return "HTTP+JSON" if transport is TransportProtocol.HTTP_JSON else transport.value


@pytest.mark.parametrize("interface", INTERFACES, ids=lambda i: f"{i[0].value}-{i[1]}")
async def test_a_hook_runs_once_around_each_operation(
    served: tuple[str, RequestPipeline], interface: tuple[TransportProtocol, str]
) -> None:
    url, pipeline = served
    calls: list[tuple[str, str]] = []

    async def record(call: Call, proceed: Proceed) -> Any:
        calls.append((call.context.principal.id, call.inbound.binding))
        return await proceed()

    async def refuse_cancel(call: Call, proceed: Proceed) -> Any:
        if "ancel" in call.inbound.method:
            raise PermissionDenied("nobody cancels here")
        return await proceed()

    pipeline.add_hook(record)
    pipeline.add_hook(refuse_cancel)
    try:
        async with client(url, interface, key="bob") as bob:
            task = await bob.send("hi")
            with pytest.raises(PermissionDenied, match="nobody cancels"):
                await bob.cancel_task(task.id)
    finally:
        pipeline.hooks.remove(record)
        pipeline.hooks.remove(refuse_cancel)
    assert calls == [("bob", _binding(interface[0]))] * 2


async def test_a_refusal_says_what_is_accepted_in_www_authenticate(
    served: tuple[str, RequestPipeline],
) -> None:
    import httpx

    url, _ = served
    body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}}
    async with httpx.AsyncClient() as http:
        jsonrpc = await http.post(url + "/", json=body)
        rest = await http.get(url + "/tasks/x", headers={"A2A-Version": "1.0"})
    for response in (jsonrpc, rest):
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == f'ApiKey header="{KEY_HEADER}"'
    assert jsonrpc.json()["error"]["code"] == Unauthenticated.code
    assert rest.json()["error"]["status"] == "UNAUTHENTICATED"


async def test_an_unexpected_failure_in_a_hook_is_an_internal_error_not_a_crash(
    served: tuple[str, RequestPipeline],
) -> None:
    url, pipeline = served

    async def broken(call: Call, proceed: Proceed) -> Any:
        raise RuntimeError("bug in a hook")

    pipeline.add_hook(broken)
    try:
        async with client(url, INTERFACES[0], key="ada") as ada:
            with pytest.raises(A2AError) as caught:
                await ada.send("hi")
    finally:
        pipeline.hooks.remove(broken)
    assert caught.value.code == -32603
    assert "bug in a hook" not in caught.value.message
