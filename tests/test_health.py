"""`/healthz` and `/readyz`: answered before host checks and authentication; ready only while
the store and the bus answer."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
from sqlalchemy.engine import make_url
from starlette.applications import Starlette

import accord
from accord.auth import ApiKey, Security
from accord.runtime import open_bus
from accord.samples import echo
from accord.store import open_store
from accord.types import new_id
from live_server import serve_app
from services import redis_url
from stores import fresh_pg_schema, pg_schema_url
from tcp_relay import TcpRelay


def test_probes_answer_any_host_and_no_credentials() -> None:
    secured = accord.Agent(
        echo.agent.executor, name="Keyed echo", security=Security(ApiKey(keys={"k": "a"}))
    )
    with serve_app(secured.app()) as url:
        for path, body in (("/healthz", {"status": "ok"}), ("/readyz", {"status": "ready"})):
            answer = httpx.get(url + path, headers={"Host": "pod-10-0-0-7.internal"})
            assert (answer.status_code, answer.json()) == (200, body)
        card = httpx.get(url + "/.well-known/agent-card.json").text
        assert "healthz" not in card and "readyz" not in card
        # Everything else still needs an allowed Host.
        refused = httpx.get(url + "/.well-known/agent-card.json", headers={"Host": "x"})
        assert refused.status_code == 400


async def test_not_ready_before_the_app_started() -> None:
    app = accord.create_app(echo.agent)
    transport = httpx.ASGITransport(app)  # no lifespan: the store was never opened
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        assert (await client.get("/healthz")).status_code == 200
        answer = await client.get("/readyz")
    assert (answer.status_code, answer.json()) == (503, {"status": "unready", "reason": "starting"})


def _through(url: str, relay: TcpRelay) -> str:
    return make_url(url).set(port=relay.port).render_as_string(hide_password=False)


async def unready_once_cut(app: Starlette, relay: TcpRelay, reason: str) -> None:
    """`app`, served, is ready until `relay` is cut, then unready for `reason` (yet alive)."""
    with serve_app(app) as url:
        async with httpx.AsyncClient(base_url=url) as client:
            assert (await client.get("/readyz")).status_code == 200
            relay.cut()
            answer = await client.get("/readyz")
            assert answer.status_code == 503
            assert answer.json() == {"status": "unready", "reason": reason}
            assert (await client.get("/healthz")).status_code == 200


async def test_not_ready_when_postgresql_goes_away() -> None:
    pg = make_url(pg_schema_url("x"))
    async with fresh_pg_schema() as schema:
        with TcpRelay(pg.host or "127.0.0.1", pg.port or 5432) as relay:
            store = open_store(_through(pg_schema_url(schema), relay))
            app = accord.create_app(echo.agent, store=store)
            await unready_once_cut(app, relay, "store unreachable")


async def test_not_ready_when_redis_goes_away() -> None:
    redis = urlsplit(await redis_url())
    with TcpRelay(redis.hostname or "127.0.0.1", redis.port or 6379) as relay:
        # The bus only reads its stream here: nothing is written to Redis.
        bus = open_bus(f"redis://127.0.0.1:{relay.port}/0?stream=accord:test:{new_id()}")
        await unready_once_cut(accord.create_app(echo.agent, bus=bus), relay, "bus unreachable")
