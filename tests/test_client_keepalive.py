"""KeepAliveTransport: plain HTTP/1.1 on kept-alive connections, bodies whole or streamed."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from accord.client.keepalive import KeepAliveTransport
from live_server import serve_app


class RawServer:
    """A loopback HTTP/1.1 server on plain sockets that ends each connection after `kept`
    requests, the last one answered or not (`answers_last`): a server closing connections it
    keeps idle. Each answer is kept alive, its body the port of the caller. It records each
    request's method (`methods`) and each connection's port (`peers`), and sets `closed`
    whenever a connection ended."""

    def __init__(self, kept: int, answers_last: bool = True) -> None:
        self.kept = kept
        self.answers_last = answers_last
        self.methods: list[str] = []
        self.peers: set[int] = set()
        self.closed = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/"

    @contextmanager
    def running(self) -> Iterator[RawServer]:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                peer, address = self._listener.accept()
            except OSError:  # closed: the test is over
                return
            threading.Thread(target=self._serve, args=(peer, address[1]), daemon=True).start()

    def _serve(self, peer: socket.socket, port: int) -> None:
        self.peers.add(port)
        with peer, peer.makefile("rb") as reader:
            for n in range(1, self.kept + 1):
                head = []
                while (line := reader.readline()) not in (b"\r\n", b""):
                    head.append(line)
                if not line:  # the client hung up
                    break
                self.methods.append(head[0].split()[0].decode())
                length = [
                    int(h.split(b":")[1]) for h in head if h.lower().startswith(b"content-length")
                ]
                reader.read(length[0] if length else 0)
                if n < self.kept or self.answers_last:
                    body = str(port).encode()
                    peer.sendall(
                        b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
                    )
        self.closed.set()


async def peer(request: Request) -> JSONResponse:
    assert request.client is not None
    body = await request.body()
    return JSONResponse({"port": request.client.port, "body": body.decode()})


async def chunks(request: Request) -> StreamingResponse:
    async def lines() -> AsyncIterator[bytes]:
        for n in range(3):
            yield f"line {n}\n".encode()

    return StreamingResponse(lines(), media_type="text/plain")


APP = Starlette(routes=[Route("/peer", peer, methods=["POST"]), Route("/chunks", chunks)])


def endless_app(ended: threading.Event) -> Starlette:
    """An app whose one route streams events until its caller goes, then sets `ended`."""

    async def events(request: Request) -> StreamingResponse:
        async def ticks() -> AsyncIterator[bytes]:
            try:
                while True:
                    yield b"data: tick\n\n"
                    await asyncio.sleep(0.01)
            finally:
                ended.set()

        return StreamingResponse(ticks(), media_type="text/event-stream")

    return Starlette(routes=[Route("/events", events)])


def one_connection() -> KeepAliveTransport:
    return KeepAliveTransport(limits=httpx.Limits(max_connections=1))


@contextmanager
def silent_server() -> Iterator[str]:
    """A port whose connections are taken (by the kernel) and never read from nor answered."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"


async def test_requests_one_after_another_share_a_connection() -> None:
    with serve_app(APP) as url:
        async with httpx.AsyncClient(transport=KeepAliveTransport()) as http:
            answers = [(await http.post(f"{url}/peer", content=f"#{n}")).json() for n in range(3)]
    assert [a["body"] for a in answers] == ["#0", "#1", "#2"]
    assert len({a["port"] for a in answers}) == 1


async def test_a_chunked_body_streams_and_its_connection_is_kept_once_read() -> None:
    with serve_app(APP) as url:
        async with httpx.AsyncClient(transport=KeepAliveTransport()) as http:
            async with http.stream("GET", f"{url}/chunks") as response:
                lines = [line async for line in response.aiter_lines()]
            first = (await http.post(f"{url}/peer", content="a")).json()
            second = (await http.post(f"{url}/peer", content="b")).json()
    assert response.status_code == 200 and lines == ["line 0", "line 1", "line 2"]
    assert first["port"] == second["port"]


async def test_a_closed_port_is_a_connect_error() -> None:
    async with httpx.AsyncClient(transport=KeepAliveTransport()) as http:
        with pytest.raises(httpx.ConnectError):
            await http.get("http://127.0.0.1:9/")


async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    with RawServer(kept=1).running() as server:
        async with httpx.AsyncClient(transport=KeepAliveTransport()) as http:
            first = await http.post(server.url, content="a")
            assert server.closed.wait(5)  # blocks the loop: the close stays unread on the socket
            second = await http.post(server.url, content="b")
    assert first.status_code == second.status_code == 200 and first.text != second.text
    assert server.methods == ["POST", "POST"]


async def test_an_idempotent_request_the_server_closed_on_unanswered_goes_again() -> None:
    with RawServer(kept=2, answers_last=False).running() as server:
        async with httpx.AsyncClient(transport=KeepAliveTransport()) as http:
            first = await http.get(server.url)
            second = await http.get(server.url)
    assert first.status_code == second.status_code == 200 and first.text != second.text
    assert server.methods == ["GET", "GET", "GET"]


async def test_a_post_the_server_closed_on_unanswered_is_not_sent_again() -> None:
    with RawServer(kept=2, answers_last=False).running() as server:
        async with httpx.AsyncClient(transport=KeepAliveTransport()) as http:
            await http.post(server.url, content="a")
            with pytest.raises(httpx.RemoteProtocolError):
                await http.post(server.url, content="b")
    assert server.methods == ["POST", "POST"]


async def test_an_upstream_that_never_answers_is_a_read_timeout() -> None:
    with silent_server() as url:
        async with httpx.AsyncClient(transport=KeepAliveTransport(), timeout=0.2) as http:
            with pytest.raises(httpx.ReadTimeout):
                await http.get(url)


async def test_a_body_the_upstream_never_reads_is_a_write_timeout() -> None:
    timeout = httpx.Timeout(5, write=0.2)
    with silent_server() as url:
        async with httpx.AsyncClient(transport=KeepAliveTransport(), timeout=timeout) as http:
            with pytest.raises(httpx.WriteTimeout):
                await http.post(url, content=bytes(32 << 20))  # more than the sockets buffer


async def test_requests_beyond_the_limit_wait_for_a_connection() -> None:
    with serve_app(APP) as url:
        async with httpx.AsyncClient(transport=one_connection()) as http:
            sent = [http.post(f"{url}/peer", content=f"#{n}") for n in range(4)]
            answers = [response.json() for response in await asyncio.gather(*sent)]
    assert [a["body"] for a in answers] == ["#0", "#1", "#2", "#3"]
    assert len({a["port"] for a in answers}) == 1


async def test_a_request_waiting_for_a_connection_longer_than_the_pool_timeout_fails() -> None:
    with serve_app(APP) as url:
        async with (
            httpx.AsyncClient(transport=one_connection()) as http,
            http.stream("GET", f"{url}/chunks"),
        ):
            with pytest.raises(httpx.PoolTimeout):
                await http.post(f"{url}/peer", timeout=httpx.Timeout(5, pool=0.1))


async def test_closing_the_transport_closes_connections_in_use() -> None:
    ended = threading.Event()
    with serve_app(endless_app(ended)) as url:
        transport = KeepAliveTransport()
        async with (
            httpx.AsyncClient(transport=transport) as http,
            http.stream("GET", f"{url}/events") as response,
        ):
            lines = response.aiter_lines()
            await anext(lines)
            await transport.aclose()
            assert await asyncio.to_thread(ended.wait, 5)
            with pytest.raises(httpx.RemoteProtocolError):
                async for _ in lines:
                    pass


async def test_a_closed_transport_refuses_requests_and_closes_idle_connections() -> None:
    with RawServer(kept=2).running() as server:
        transport = KeepAliveTransport()
        async with httpx.AsyncClient(transport=transport) as http:
            assert (await http.get(server.url)).status_code == 200
            await transport.aclose()
            assert await asyncio.to_thread(server.closed.wait, 5)  # the idle one
            with pytest.raises(RuntimeError, match="closed"):
                await http.get(server.url)
    assert server.methods == ["GET"]


async def test_a_request_waiting_for_a_connection_when_the_transport_closes_is_refused() -> None:
    with serve_app(APP) as url:
        transport = one_connection()
        async with httpx.AsyncClient(transport=transport, timeout=5) as http:
            async with http.stream("GET", f"{url}/chunks"):
                waiting = asyncio.create_task(http.post(f"{url}/peer"))
                await asyncio.sleep(0.05)
                await transport.aclose()
            with pytest.raises(RuntimeError, match="closed"):
                await waiting


async def test_a_connection_idle_longer_than_the_keepalive_expiry_is_not_reused() -> None:
    transport = KeepAliveTransport(limits=httpx.Limits(keepalive_expiry=0))
    with serve_app(APP) as url:
        async with httpx.AsyncClient(transport=transport) as http:
            answers = [(await http.post(f"{url}/peer", content=f"#{n}")).json() for n in range(2)]
    assert answers[0]["port"] != answers[1]["port"]


async def test_a_stream_its_reader_leaves_early_closes_its_connection_and_frees_it() -> None:
    ended = threading.Event()
    with serve_app(endless_app(ended)) as url:
        async with httpx.AsyncClient(transport=one_connection(), timeout=5) as http:
            async with http.stream("GET", f"{url}/events") as response:
                async for line in response.aiter_lines():
                    assert line == "data: tick"
                    break
            assert await asyncio.to_thread(ended.wait, 5)
            ended.clear()
            async with http.stream("GET", f"{url}/events") as response:
                assert await anext(response.aiter_lines()) == "data: tick"
            assert await asyncio.to_thread(ended.wait, 5)


async def test_a_body_that_came_whole_but_was_left_unread_keeps_its_connection() -> None:
    with RawServer(kept=2).running() as server:
        async with httpx.AsyncClient(transport=KeepAliveTransport()) as http:
            async with http.stream("GET", server.url) as response:
                await response.aclose()  # the body, sent with the head, left unread
            second = await http.get(server.url)
    assert second.status_code == 200
    assert server.methods == ["GET", "GET"] and len(server.peers) == 1


async def test_a_head_request_is_answered() -> None:
    with serve_app(APP) as url:
        async with httpx.AsyncClient(transport=KeepAliveTransport()) as http:
            response = await http.head(f"{url}/chunks")
    assert response.status_code == 200 and response.content == b""


def test_a_transport_serves_an_event_loop_after_another_ended() -> None:
    transport = KeepAliveTransport()

    async def ask(url: str) -> int:
        http = httpx.AsyncClient(transport=transport)  # left open, as a long-lived one
        return (await http.post(f"{url}/peer")).status_code

    with serve_app(APP) as url:
        assert asyncio.run(ask(url)) == 200
        assert asyncio.run(ask(url)) == 200
