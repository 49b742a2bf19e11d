"""Several upstreams behind one gateway, each at a path prefix of its own, health-checked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from accord.agents import Agent
from accord.gateway.executor import GatewayExecutor

HEALTH_PATH = "/health"
HEALTH_TIMEOUT = 5.0
"""How long a health check waits for an upstream's card."""


class Health:
    """Whether each upstream answers: its card fetched, at most `timeout` seconds each."""

    def __init__(self, upstreams: Mapping[str, str], timeout: float = HEALTH_TIMEOUT) -> None:
        self.upstreams = dict(upstreams)
        self.timeout = timeout

    async def check(self) -> dict[str, dict[str, Any]]:
        """Per prefix: the upstream's URL, whether it is up, and why not."""
        async with httpx.AsyncClient(timeout=self.timeout) as http:
            answers = await asyncio.gather(
                *(self._one(http, url) for url in self.upstreams.values())
            )
        return dict(zip(self.upstreams, answers, strict=True))

    async def endpoint(self, request: Request) -> JSONResponse:
        """`GET /health`: 200 when every upstream answers, else 503 naming those down."""
        upstreams = await self.check()
        up = all(state["up"] for state in upstreams.values())
        return JSONResponse({"up": up, "upstreams": upstreams}, status_code=200 if up else 503)

    async def _one(self, http: httpx.AsyncClient, url: str) -> dict[str, Any]:
        card_url = url.rstrip("/") + "/.well-known/agent-card.json"
        try:
            response = await http.get(card_url)
        except httpx.HTTPError as exc:
            return {
                "url": url,
                "up": False,
                "error": f"cannot be reached: {exc or type(exc).__name__}",
            }
        if response.status_code != 200:
            return {
                "url": url,
                "up": False,
                "error": f"its card answers HTTP {response.status_code}",
            }
        return {"url": url, "up": True}


def routed(
    agents: Mapping[str, Agent], *, stores: Mapping[str, Any] | None = None, **options: Any
) -> Starlette:
    """One app serving each gateway of `agents` at `/PREFIX` (its card at
    `/PREFIX/.well-known/agent-card.json`, every binding below it) and the upstreams' health at
    `/health`. `options` go to each agent's app (`Agent.app`: `store`, `config`, ...); a
    store given is one agent's, so give each its own (`stores`)."""
    stores = options.pop("stores", {})
    apps = {
        prefix.strip("/"): agent.app(
            **options, **({"store": stores[prefix]} if prefix in stores else {})
        )
        for prefix, agent in agents.items()
    }
    health = Health({prefix.strip("/"): upstream_url(agent) for prefix, agent in agents.items()})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as running:
            for child in apps.values():
                await running.enter_async_context(child.router.lifespan_context(child))
            yield

    routes: list[BaseRoute] = [Route(HEALTH_PATH, health.endpoint, methods=["GET"])]
    routes += [Mount(f"/{prefix}", app=AtItsPrefix(child)) for prefix, child in apps.items()]
    return Starlette(routes=routes, lifespan=lifespan)


class AtItsPrefix:
    """A mounted agent's app, whose requests' base URL is its mount point (Starlette keeps the
    outermost app's): the URLs its card lists then lead to it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = {**scope, "app_root_path": scope.get("root_path", "")}
        await self.app(scope, receive, send)


def upstream_url(agent: Agent) -> str:
    """The upstream of a gateway agent (ValueError for another agent)."""
    if not isinstance(agent.executor, GatewayExecutor):
        raise ValueError(f"{agent.name} is not a gateway: routed() serves gateways")
    return agent.executor.upstream.url


def _store(stores: Mapping[str, Any] | None, prefix: str) -> dict[str, Any]:
    return {"store": stores[prefix]} if stores and prefix in stores else {}
