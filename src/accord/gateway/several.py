"""A gateway in front of several upstreams: one card with all their skills, each call routed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from anyio.from_thread import start_blocking_portal
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from accord.agents import Agent, AgentExecutor
from accord.agents.agent import DeclaresSecurity
from accord.client.credentials import Credential, Credentials
from accord.gateway.router import SkillRouter
from accord.gateway.routing import HEALTH_PATH, Health
from accord.gateway.sources import REFRESH_INTERVAL, RegistrySource, UpstreamOptions, UpstreamSet
from accord.types import AgentExtension


class SeveralGateway(Agent):
    """The `Agent` of a gateway in front of several upstreams: its router reads the store of
    each app serving it (the upstream each task and context belongs to)."""

    executor: SkillRouter

    def app(self, **options: Any) -> Starlette:
        app = super().app(**options)
        runtime = app.state.runtime

        def on_store(router: AgentExecutor) -> AgentExecutor:
            assert isinstance(router, SkillRouter)
            return router.on_store(runtime.store)

        runtime.wrap_executor(on_store)
        return app


def several(
    urls: Sequence[str] | Mapping[str, str] = (),
    *,
    registry: str | None = None,
    query: str = "",
    filters: Mapping[str, str | Sequence[str]] | None = None,
    default: str | None = None,
    refresh: float | None = REFRESH_INTERVAL,
    name: str = "Gateway",
    description: str | None = None,
    credentials: Credentials | Sequence[Credential] | None = None,
    transport: str | None = None,
    version: str | None = None,
    security: DeclaresSecurity | None = None,
    push_notifications: bool = True,
) -> SeveralGateway:
    """An `Agent` relaying each call to one of several upstreams (docs/gateway.md): those at
    `urls` (a list of URLs or `NAME=URL`, or a mapping of names to URLs; an upstream given
    without a name is named after its card) and those the accord registry at `registry` finds
    for `query` and `filters`, read again every `refresh` seconds (None: never). Its card
    lists their skills (an id two upstreams share as `NAME/ID` for each); a message goes to
    the upstream of its task or context, else of the skill it names, else to `default`
    (`SkillRouter`). Every upstream's card is read now; one that cannot be is an error.
    `GET /health` says which upstreams answer. The other options are `accord.gateway`'s.
    """
    options = UpstreamOptions(credentials, transport, version)
    source = RegistrySource(registry, query, dict(filters or {})) if registry else None
    upstreams = UpstreamSet(urls, source, options, refresh)
    with start_blocking_portal() as portal:
        portal.call(upstreams.load)
    if not upstreams.executors:
        raise ValueError("a gateway needs an upstream: give its URL, or a registry that has one")
    if default is None and len(upstreams.executors) == 1:
        default = next(iter(upstreams.executors))
    router = SkillRouter(upstreams, default)

    async def health(request: Request) -> Response:
        urls = {name: upstreams.url(name) for name in upstreams.cards}
        return await Health(urls).endpoint(request)

    cards = list(upstreams.cards.values())
    return SeveralGateway(
        router,
        name=name,
        description=description or "Relays to " + ", ".join(upstreams.cards) + ".",
        skills=upstreams.table.skills,
        input_modes=_union(mode for card in cards for mode in card.default_input_modes),
        output_modes=_union(mode for card in cards for mode in card.default_output_modes),
        streaming=True,
        push_notifications=push_notifications,
        extensions=_union_by_uri(ext for c in cards for ext in c.capabilities.extensions or ()),
        security=security,
        routes=[Route(HEALTH_PATH, health, methods=["GET"])],
    )


def _union(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _union_by_uri(extensions: Iterable[AgentExtension]) -> list[AgentExtension]:
    return list({extension.uri: extension for extension in extensions}.values())
