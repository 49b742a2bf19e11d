"""A gateway in front of several upstreams: one card with all their skills, each call routed."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from anyio.from_thread import start_blocking_portal
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from accord.agents import Agent, AgentExecutor
from accord.agents.agent import DeclaresSecurity
from accord.client.credentials import Credential, Credentials
from accord.gateway.card import gateway_agent
from accord.gateway.router import PINNED, SkillRouter
from accord.gateway.routing import HEALTH_PATH, AtItsPrefix, Health
from accord.gateway.sources import REFRESH_INTERVAL, RegistrySource, UpstreamOptions, UpstreamSet
from accord.types import AgentCard, AgentExtension, AgentSkill


class SeveralGateway(Agent):
    """The `Agent` of a gateway in front of several upstreams: its router reads the store of
    each app serving it (the upstream each task and context belongs to), and each upstream of
    `prefixes` (path prefix: upstream) is served at its prefix too, with its own card, made
    by `entrance`. Its card joins the upstreams' (`joined`), and follows them when they
    change (`UpstreamSet.watchers`); `description` None says which they are."""

    executor: SkillRouter

    def __init__(
        self,
        executor: SkillRouter,
        *,
        prefixes: Sequence[str] = (),
        entrance: Callable[[AgentCard], Agent] | None = None,
        description: str | None = None,
        **card: Any,
    ) -> None:
        super().__init__(executor, **card)
        self._described = description
        self._routes = list(prefixes)
        self._entrance = entrance or (lambda upstream: gateway_agent(executor, upstream))
        self.prefixes: dict[str, Agent] = {}
        """Each path prefix's upstream, by name, and its own card (a gateway agent's)."""
        self._card = self._joined_card()
        executor.upstreams.watchers.append(self._upstreams_changed)

    def _joined_card(self) -> AgentCard:
        """The card made from the upstreams' as they are now (each prefix's too)."""
        cards = self.executor.upstreams.cards
        self.prefixes = {name: self._entrance(cards[name]) for name in self._routes}
        described = self._described or "Relays to " + ", ".join(cards) + "."
        update = {**joined(cards, self.executor.upstreams.table.skills), "description": described}
        extensions = update.pop("extensions") or None
        update["capabilities"] = self._card.capabilities.model_copy(
            update={"extensions": extensions}
        )
        return self._card.model_copy(update=update)

    def _upstreams_changed(self) -> None:
        self.change_card(self._joined_card())

    def card(self, url: str) -> AgentCard:
        pinned = PINNED.get()
        return self.prefixes[pinned].card(url) if pinned else super().card(url)

    def app(self, **options: Any) -> Starlette:
        app = super().app(**options)
        runtime = app.state.runtime

        def on_store(router: AgentExecutor) -> AgentExecutor:
            assert isinstance(router, SkillRouter)
            return router.on_store(runtime.store)

        runtime.wrap_executor(on_store)
        if self.prefixes and app.state.config.public_url:
            raise ValueError(
                "a gateway with routes takes no public URL: the card at each prefix names the"
                " URL its requests come by"
            )
        taken = {route.path.split("/")[1] for route in app.routes if isinstance(route, Route)}
        for name in self.prefixes:  # the same routes below each prefix: one store, one runtime
            if name.split("/")[0] in taken:
                raise ValueError(f"the route /{name} would hide the gateway's own /{name}")
            pinned = AtItsPrefix(Pinning(app.router, name))  # the app's middleware ran already
            app.router.routes.insert(0, Mount(f"/{name}", app=pinned))
        return app


class Pinning:
    """Serves `app` with each request's calls pinned to the upstream `name` (`PINNED`)."""

    def __init__(self, app: ASGIApp, name: str) -> None:
        self.app = app
        self.name = name

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = PINNED.set(self.name)
        try:
            await self.app(scope, receive, send)
        finally:
            PINNED.reset(token)


def several(
    urls: Sequence[str] | Mapping[str, str] = (),
    *,
    routes: Mapping[str, str] | None = None,
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
    for `query` and `filters`, read again every `refresh` seconds (None: never), and those of
    `routes` (a path prefix: an upstream's URL, named after its prefix), which are also served
    at their prefix, with their own card, every call there going to them. Its card
    lists their skills (an id two upstreams share as `NAME/ID` for each); a message goes to
    the upstream of its task or context, else of the prefix it came by, else of the skill it
    names, else to `default` (`SkillRouter`). Every upstream's card is read now; one that
    cannot be is an error. `GET /health` says which upstreams answer. The other options are
    `accord.gateway`'s.
    """
    options = UpstreamOptions(credentials, transport, version)
    source = RegistrySource(registry, query, dict(filters or {})) if registry else None
    prefixed = {prefix_name(prefix): url for prefix, url in (routes or {}).items()}
    if isinstance(urls, Mapping):
        every: Sequence[str] | Mapping[str, str] = {**urls, **prefixed}
    else:
        every = [*urls, *(f"{name}={url}" for name, url in prefixed.items())]
    upstreams = UpstreamSet(every, source, options, refresh)
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

    def entrance(upstream: AgentCard) -> Agent:
        return gateway_agent(
            router, upstream, security=security, push_notifications=push_notifications
        )

    return SeveralGateway(
        router,
        prefixes=list(prefixed),
        entrance=entrance,
        name=name,
        description=description,
        streaming=True,
        push_notifications=push_notifications,
        security=security,
        routes=[Route(HEALTH_PATH, health, methods=["GET"])],
    )


def joined(cards: Mapping[str, AgentCard], skills: Sequence[AgentSkill]) -> dict[str, Any]:
    """The fields of the gateway's card the upstreams' `cards` make: `skills` (theirs, ids
    made unique), the union of their modes and extensions."""
    every = list(cards.values())
    return {
        "skills": list(skills),
        "default_input_modes": _union(m for card in every for m in card.default_input_modes),
        "default_output_modes": _union(m for card in every for m in card.default_output_modes),
        "extensions": _union_by_uri(
            extension for card in every for extension in card.capabilities.extensions or ()
        ),
    }


def _union(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _union_by_uri(extensions: Iterable[AgentExtension]) -> list[AgentExtension]:
    return list({extension.uri: extension for extension in extensions}.values())


def prefix_name(prefix: str) -> str:
    """The upstream name of a path prefix (`/billing`: `billing`); ValueError for one that is
    not a path segment or more of letters, digits and `-._~`."""
    name = prefix.strip("/")
    if not re.fullmatch(r"[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*", name):
        raise ValueError(f"a route's prefix is a path like /billing, got {prefix!r}")
    return name
