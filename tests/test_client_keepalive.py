"""KeepAliveTransport: plain HTTP/1.1 on kept-alive connections, bodies whole or streamed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from accord.client.keepalive import KeepAliveTransport
from live_server import serve_app


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
