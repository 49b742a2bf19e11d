"""A Client over KeepAliveTransport sends its requests straight to it (DirectClient): as httpx
would send them, with the same errors, extensions, cookies and connections kept or not."""

from __future__ import annotations

import gzip
import logging
import socket
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

import accord
from accord import RequestContext
from accord.auth import ApiKey as Key
from accord.auth import Security
from accord.client import ApiKey, Client, activated_extensions
from accord.client.direct import DirectClient, fetch, streamed
from accord.client.keepalive import KeepAliveTransport
from accord.client.messages import user_message
from accord.codecs.card import read_card
from accord.errors import A2AClientError, AgentUnreachable, TaskNotFound
from accord.types import AgentCapabilities, AgentCard, Message
from rpc import served

INTERFACES = [("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0"), ("HTTP+JSON", "0.3")]

Scope = MutableMapping[str, Any]


@accord.agent
def ok(context: RequestContext) -> str:
    """Answers ok."""
    return "ok"


class Recorded:
    """An ASGI app in front of `app` recording each request as it comes (method, path, query,
    headers, the body read so far) and the caller's port (`peers`), and adding
    `answer_headers` to each answer."""

    def __init__(self, app: Any, answer_headers: list[tuple[bytes, bytes]] | None = None) -> None:
        self.app = app
        self.answer_headers = answer_headers or []
        self.requests: list[tuple[str, str, bytes, list[tuple[bytes, bytes]], bytearray]] = []
        self.peers: list[int] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = bytearray()
        request = (scope["method"], scope["path"], scope["query_string"], scope["headers"], body)
        self.requests.append(request)
        self.peers.append(scope["client"][1])

        async def received() -> Any:
            message = await receive()
            body.extend(message.get("body", b""))
            return message

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], *self.answer_headers]}
            await send(message)

        await self.app(scope, received, sending)


class Counting(KeepAliveTransport):
    """A KeepAliveTransport counting the requests httpx's client handed it."""

    def __init__(self) -> None:
        super().__init__()
        self.through_httpx = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.through_httpx += 1
        return await super().handle_async_request(request)


GUARDED = accord.Agent(ok.executor, name="Guarded", security=Security(Key({"key": "team"})))
"""An agent asking for an API key (`X-API-Key: key`)."""


@contextmanager
def recorded(
    agent: accord.Agent = GUARDED, answer_headers: list[tuple[bytes, bytes]] | None = None
) -> Iterator[tuple[Recorded, str, AgentCard]]:
    """`agent` served behind a Recorded app: the app, its URL and the agent's card."""
    app = Recorded(accord.create_app(agent), answer_headers)
    with served(app) as url:
        card = httpx.get(f"{url}/.well-known/agent-card.json").json()
        app.requests.clear()
        app.peers.clear()
        yield app, url, read_card(card)


def card_at(url: str) -> AgentCard:
    return AgentCard(
        name="Somewhere",
        description="An agent at a URL.",
        url=url,
        version="1",
        capabilities=AgentCapabilities(),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[],
    )


async def calls(client: Client) -> None:
    """A send, a stream and a `get_task` (a GET with a query over HTTP+JSON)."""
    message = user_message("hi").model_copy(update={"message_id": "m1"})
    assert isinstance(await client.send(message), Message)
    assert [type(event) async for event in client.stream(message)] == [Message]
    with pytest.raises(TaskNotFound):
        await client.get_task("nothing", history_length=2)


@pytest.mark.parametrize(("transport", "version"), INTERFACES)
async def test_requests_go_out_straight_as_httpx_sends_them(transport: str, version: str) -> None:
    with recorded() as (app, url, card):
        sent = []
        counting = Counting()
        for http_transport in (httpx.AsyncHTTPTransport(), counting):
            app.requests.clear()
            async with Client(
                url,
                card=card,
                transport=transport,
                version=version,
                headers={"X-Caller": "test", "accept-language": "en"},
                extensions=["urn:example:ext"],
                credentials=[ApiKey("key")],
                http_transport=http_transport,
            ) as client:
                await calls(client)
            sent.append(app.requests[:])
        assert sent[0] == sent[1]
        assert len(sent[1]) == 3
        assert counting.through_httpx == 0


async def test_timeouts_and_refusals_are_accords_errors() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:  # taken, never answered
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
        transport = Counting()
        async with Client(url, card=card_at(url), timeout=0.2, http_transport=transport) as client:
            with pytest.raises(A2AClientError, match=f"POST {url} timed out"):
                await client.send("hi")
    refused = Counting()  # the first client closed its transport with itself
    async with Client(url, card=card_at(url), http_transport=refused) as client:
        with pytest.raises(AgentUnreachable, match=f"cannot connect to {url}"):
            await client.send("hi")
    assert transport.through_httpx == refused.through_httpx == 0


async def test_the_extensions_an_answer_lists_are_activated() -> None:
    with recorded(answer_headers=[(b"a2a-extensions", b"urn:example:ext")]) as (_, url, card):
        transport = Counting()
        async with Client(
            url, card=card, credentials=[ApiKey("key")], http_transport=transport
        ) as client:
            with activated_extensions() as activated:
                await client.send("hi")
            assert activated == ["urn:example:ext"]
            with activated_extensions() as activated:
                assert [type(event) async for event in client.stream("hi")] == [Message]
            assert activated == ["urn:example:ext"]
        assert transport.through_httpx == 0


async def test_a_cookie_the_agent_sets_goes_back_with_the_next_requests() -> None:
    with recorded(ok, [(b"set-cookie", b"session=s1; Path=/")]) as (app, url, card):
        transport = Counting()
        async with Client(url, card=card, http_transport=transport) as client:
            await client.send("hi")
            await client.send("hi")
    cookies = [dict(request[3]).get(b"cookie") for request in app.requests]
    assert cookies == [None, b"session=s1"]
    assert transport.through_httpx == 1  # httpx's jar chooses the cookies to send


async def test_a_connection_the_agent_closes_is_not_used_again() -> None:
    with recorded(ok, [(b"connection", b"close")]) as (app, url, card):
        async with Client(url, card=card, http_transport=KeepAliveTransport()) as client:
            for _ in range(3):
                assert isinstance(await client.send("hi"), Message)
    assert len(set(app.peers)) == 3


async def test_each_request_is_logged_as_httpx_logs_it(caplog: pytest.LogCaptureFixture) -> None:
    with recorded(ok) as (_, url, card):
        logged = []
        for http_transport in (httpx.AsyncHTTPTransport(), KeepAliveTransport()):
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="httpx"):
                async with Client(url, card=card, http_transport=http_transport) as client:
                    await client.send("hi")
            logged.append([r.getMessage() for r in caplog.records if r.name == "httpx"])
    assert logged[0] == logged[1]
    assert logged[1] == [f'HTTP Request: POST {card.url} "HTTP/1.1 200 OK"']


async def plain_or_gzip(scope: Scope, receive: Any, send: Any) -> None:
    """An app answering `/gzip` with a gzip-coded body, any other path with one in two chunks."""
    if scope["type"] != "http":  # lifespan: not supported
        return
    if scope["path"] == "/gzip":
        headers = [(b"content-encoding", b"gzip"), (b"content-length", b"%d" % len(GZIPPED))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": GZIPPED})
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"first ", "more_body": True})
    await send({"type": "http.response.body", "body": b"second"})


GZIPPED = gzip.compress(b"unpacked")


async def fields(scope: Scope, receive: Any, send: Any) -> None:
    """An app answering with a name repeated, `/latin` with a value that is not ASCII."""
    if scope["type"] != "http":  # lifespan: not supported
        return
    value = b"caf\xe9" if scope["path"] == "/latin" else b"plain"
    headers = [(b"X-Twice", b"a"), (b"x-twice", b"b, c"), (b"X-Value", value)]
    await send({"type": "http.response.start", "status": 201, "headers": headers})
    await send({"type": "http.response.body", "body": b"done"})


async def test_a_body_streamed_straight_reads_as_httpx_reads_it() -> None:
    with served(plain_or_gzip) as url:
        direct = DirectClient(timeout=5, auth=None, transport=KeepAliveTransport())
        async with direct, httpx.AsyncClient() as through_httpx:
            for path, content in (("/gzip", b"unpacked"), ("/chunked", b"first second")):
                target = httpx.URL(url + path)
                async with streamed(direct, "GET", target, content=None, headers={}) as straight:
                    await straight.aread()
                sent = await through_httpx.get(target)
                assert straight.content == sent.content == content
                assert straight.headers == sent.headers
                assert straight.num_bytes_downloaded == sent.num_bytes_downloaded
                assert straight.is_closed and straight.is_stream_consumed


@pytest.mark.parametrize(
    ("app", "path"), [(plain_or_gzip, "/gzip"), (plain_or_gzip, "/chunked"), (fields, "/"),
                      (fields, "/latin")]
)  # fmt: skip
async def test_an_answer_fetched_straight_reads_as_httpx_reads_it(app: Any, path: str) -> None:
    with served(app) as url:
        direct = DirectClient(timeout=5, auth=None, transport=KeepAliveTransport())
        async with direct, httpx.AsyncClient() as through_httpx:
            target = httpx.URL(url + path)
            answer = await fetch(direct, "POST", target, content=b"{}", headers={})
            sent = await through_httpx.post(target, content=b"{}")
            assert answer.status_code == sent.status_code
            assert answer.is_success == sent.is_success
            assert answer.content == sent.content
            assert answer.raw_headers == sent.headers.raw
            assert dict(answer.headers.items()) == dict(sent.headers.items())
            for name in ("X-Twice", "x-value", "Content-Encoding", "retry-after"):
                assert answer.headers.get(name) == sent.headers.get(name)
                assert (name in answer.headers) == (name in sent.headers)
