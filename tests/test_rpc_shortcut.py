"""JSON-RPC at the root skips routing, and still answers where the app is mounted."""

from __future__ import annotations

import httpx
from starlette.applications import Starlette
from starlette.routing import Mount

from accord.samples.echo import message_agent
from accord.server import create_app

SEND = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "message/send",
    "params": {
        "message": {
            "kind": "message",
            "messageId": "m1",
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}],
        }
    },
}


async def _post(app: Starlette, url: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.post(url, json=SEND)


async def test_json_rpc_at_the_root() -> None:
    response = await _post(create_app(message_agent, cleanup_interval=None), "/")
    assert response.json()["id"] == 7
    assert response.json()["result"]["kind"] == "message"


async def test_json_rpc_where_the_app_is_mounted() -> None:
    outer = Starlette(
        routes=[Mount("/agents/echo", create_app(message_agent, cleanup_interval=None))]
    )
    response = await _post(outer, "/agents/echo/")
    assert response.json()["result"]["kind"] == "message"
    # Below the mount point, other paths still go through the router.
    assert (await _post(outer, "/agents/echo/nowhere")).status_code in (404, 405)


async def test_other_methods_at_the_root_still_go_through_the_router() -> None:
    transport = httpx.ASGITransport(app=create_app(message_agent, cleanup_interval=None))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.get("/")
    assert response.status_code == 405


def test_indexed_headers_look_up_like_starlettes() -> None:
    from starlette.datastructures import Headers

    from accord.server.http_request import IndexedHeaders

    raw = [
        (b"content-type", b"application/json"),
        (b"a2a-extensions", b"a"),
        (b"a2a-extensions", b"b"),
    ]
    scope = {"type": "http", "headers": raw}
    indexed, plain = IndexedHeaders(scope), Headers(scope=scope)
    for name in ("Content-Type", "A2A-Extensions", "a2a-extensions", "Last-Event-ID"):
        assert indexed.get(name) == plain.get(name)
        assert (name in indexed) == (name in plain)
    assert indexed["A2A-EXTENSIONS"] == "a"
    assert indexed.getlist("a2a-extensions") == ["a", "b"]
