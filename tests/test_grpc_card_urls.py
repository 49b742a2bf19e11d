"""The cards a gRPC call returns name the server where its clients reach it, as the HTTP
bindings' cards do: the HTTP interfaces at the server's host and HTTP port, gRPC at its own
port, or everything at the configured public URL; push notifications name the same agent."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
import trustme
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import accord
from accord import Client, create_app
from accord.grpc.generated.v0_3 import a2a_pb2 as pb3
from accord.grpc.generated.v0_3 import a2a_pb2_grpc as rpc3
from accord.grpc.generated.v1_0 import a2a_pb2 as pb
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as rpc
from accord.keys.cards import JWKS_PATH
from accord.push import verify
from accord.samples import echo
from accord.server.grpc_binding import http_base_url
from accord.types import AgentCard, PushNotificationConfig, TransportProtocol
from agents_for_tests import EXTENDED_CARD, SAFETY_TIMEOUT
from live_server import serve_app
from served_process import accord_servers, free_port

GRPC = TransportProtocol.GRPC.value

AGENT_MODULE = """
import accord
from accord.samples import echo
from agents_for_tests import EXTENDED_CARD

agent = accord.Agent(echo.agent.executor, name="Carded", extended_card=EXTENDED_CARD)
"""


def carded_agent(**options: Any) -> accord.Agent:
    return accord.Agent(echo.agent.executor, name="Carded", extended_card=EXTENDED_CARD, **options)


async def cards_over_grpc(
    target: str, root_certificates: bytes | None = None
) -> tuple[pb.AgentCard, pb3.AgentCard]:
    """The extended card as the 1.0 and the 0.3 gRPC services return it at `target` (over
    TLS with `root_certificates`)."""
    async with (
        grpc.aio.secure_channel(target, grpc.ssl_channel_credentials(root_certificates))
        if root_certificates is not None
        else grpc.aio.insecure_channel(target)
    ) as channel:
        v1 = await rpc.A2AServiceStub(channel).GetExtendedAgentCard(
            pb.GetExtendedAgentCardRequest()
        )
        v0_3 = await rpc3.A2AServiceStub(channel).GetAgentCard(pb3.GetAgentCardRequest())
    return v1, v0_3


def interface_urls(v1: pb.AgentCard, v0_3: pb3.AgentCard) -> dict[str, set[str]]:
    """Every interface URL of both cards, by binding (the 0.3 `url` under JSONRPC)."""
    urls: dict[str, set[str]] = {}
    for interface in v1.supported_interfaces:
        urls.setdefault(interface.protocol_binding, set()).add(interface.url)
    for legacy in v0_3.additional_interfaces:
        urls.setdefault(legacy.transport, set()).add(legacy.url)
    urls.setdefault(v0_3.preferred_transport, set()).add(v0_3.url)
    return urls


@contextmanager
def served_on_known_port(app_for: Callable[[int], Any]) -> Iterator[str]:
    """`app_for(http_port)`'s app on a loopback socket bound before the app is made (so the
    app can be told its port); yields the base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    config = uvicorn.Config(app_for(port), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=SAFETY_TIMEOUT)
        sock.close()


@pytest.mark.processes
def test_accord_serve_cards_over_grpc_name_the_address_the_client_used(tmp_path: Path) -> None:
    (tmp_path / "carded.py").write_text(AGENT_MODULE)
    grpc_port = free_port()
    options = ("--grpc-port", str(grpc_port), "--store", "memory")
    with accord_servers(["carded:agent", *options], cwd=tmp_path) as (served,):
        v1, v0_3 = asyncio.run(cards_over_grpc(f"127.0.0.1:{grpc_port}"))
    urls = interface_urls(v1, v0_3)
    assert urls.pop(GRPC) == {f"127.0.0.1:{grpc_port}"}
    assert urls == {"JSONRPC": {served.url + "/"}, "HTTP+JSON": {served.url}}


@pytest.mark.processes
def test_over_tls_the_cards_name_https_urls(tmp_path: Path) -> None:
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1")
    server.cert_chain_pems[0].write_to_path(tmp_path / "server.pem")
    server.private_key_pem.write_to_path(tmp_path / "server.key")
    (tmp_path / "carded.py").write_text(AGENT_MODULE)
    grpc_port = free_port()
    options = (
        "--tls-cert", str(tmp_path / "server.pem"), "--tls-key", str(tmp_path / "server.key"),
        "--grpc-port", str(grpc_port), "--store", "memory",
    )  # fmt: skip
    with accord_servers(["carded:agent", *options], cwd=tmp_path) as (served,):
        target = f"127.0.0.1:{grpc_port}"
        v1, v0_3 = asyncio.run(cards_over_grpc(target, ca.cert_pem.bytes()))
    assert served.url.startswith("https://127.0.0.1:")
    urls = interface_urls(v1, v0_3)
    assert urls.pop(GRPC) == {f"https://127.0.0.1:{grpc_port}"}
    assert urls == {"JSONRPC": {served.url + "/"}, "HTTP+JSON": {served.url}}


@pytest.mark.parametrize(
    ("host", "http_port", "tls", "expected"),
    [
        ("127.0.0.1", 8000, False, "http://127.0.0.1:8000/"),
        ("::1", 8000, True, "https://[::1]:8000/"),
        ("agent.example", None, False, "http://agent.example/"),
        ("0.0.0.0", 8000, False, "http://localhost:8000/"),
        ("::", 8000, False, "http://localhost:8000/"),
        ("", 8000, False, "http://localhost:8000/"),
    ],
)
def test_the_http_base_url_a_grpc_caller_is_given(
    host: str, http_port: int | None, tls: bool, expected: str
) -> None:
    assert http_base_url(host, http_port, tls) == expected


async def test_the_grpc_cards_list_what_the_http_cards_list() -> None:
    with served_on_known_port(
        lambda port: create_app(carded_agent(), grpc_port=0, http_port=port)
    ) as url:
        over_http = await extended_card(url, "JSONRPC")
        over_grpc = await extended_card(url, "GRPC")
    assert over_grpc.url == over_http.url == url + "/"
    assert over_grpc.additional_interfaces == over_http.additional_interfaces
    assert over_grpc.supported_interfaces == over_http.supported_interfaces
    assert over_grpc.supported_interfaces is not None
    grpc_urls = {i.url for i in over_grpc.supported_interfaces if i.transport == GRPC}
    assert len(grpc_urls) == 1 and grpc_urls.pop().startswith("127.0.0.1:")


async def extended_card(url: str, transport: str) -> AgentCard:
    async with Client(url, transport=transport, version="1.0") as client:
        return await client.get_extended_card()


async def test_the_public_url_wins_over_grpc_as_over_http() -> None:
    public = "https://agent.example/a2a/"
    app = create_app(carded_agent(), grpc_port=0, http_port=1, public_url=public)
    async with app.router.lifespan_context(app):
        served = app.state.service.interfaces.served_interfaces("http://127.0.0.1/")
        port = next(i.url for i in served if i.transport == GRPC).rpartition(":")[2]
        v1, v0_3 = await cards_over_grpc(f"127.0.0.1:{port}")
    urls = interface_urls(v1, v0_3)
    assert urls.pop(GRPC) == {f"agent.example:{port}"}
    assert urls == {"JSONRPC": {public}, "HTTP+JSON": {public.rstrip("/")}}


async def test_the_card_signed_over_grpc_names_the_key_set_the_server_serves() -> None:
    with served_on_known_port(
        lambda port: create_app(carded_agent(), grpc_port=0, http_port=port)
    ) as url:
        async with Client(url, transport="GRPC", version="1.0") as client:
            target = (await client.transport()).url
        v1, _ = await cards_over_grpc(target)
    protected = v1.signatures[0].protected
    header = json.loads(base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))
    assert header["jku"] == url + JWKS_PATH


@asynccontextmanager
async def webhook() -> AsyncIterator[tuple[str, asyncio.Queue[tuple[bytes, dict[str, str]]]]]:
    """A webhook on loopback; yields its URL and the queue of (body, headers) it receives."""
    loop = asyncio.get_running_loop()
    received: asyncio.Queue[tuple[bytes, dict[str, str]]] = asyncio.Queue()

    async def hook(request: Request) -> Response:
        posted = (await request.body(), dict(request.headers))
        loop.call_soon_threadsafe(received.put_nowait, posted)
        return Response(status_code=204)

    with serve_app(Starlette(routes=[Route("/hook", hook, methods=["POST"])])) as url:
        yield url + "/hook", received


async def test_a_push_notification_after_a_grpc_call_names_the_agent_at_its_http_url() -> None:
    agent = carded_agent(push_notifications=True)
    async with webhook() as (hook_url, received):
        with served_on_known_port(
            lambda port: create_app(agent, grpc_port=0, http_port=port, push_allow=["127.0.0.1"])
        ) as url:
            async with Client(url, transport="GRPC", version="1.0") as client:
                config = PushNotificationConfig(url=hook_url, token="t")
                await client.send("hello", push=config)
            body, headers = await asyncio.wait_for(received.get(), SAFETY_TIMEOUT)
            notification = await verify(
                body,
                headers,
                keys=url + JWKS_PATH,
                audience=hook_url,
                token="t",
                issuer=url + "/",
            )
    assert notification.task_id
