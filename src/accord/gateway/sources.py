"""Where a gateway's upstreams come from: URLs and an accord registry, read again periodically."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from accord.client import Client
from accord.client.credentials import Credential, Credentials
from accord.client.registry import discover
from accord.errors import A2AClientError, A2AError
from accord.gateway.executor import GatewayExecutor
from accord.gateway.skills import SkillTable
from accord.gateway.upstream import Upstream
from accord.types import AgentCard

log = logging.getLogger("accord.gateway")

REFRESH_INTERVAL = 60.0
"""How often the registry (and every upstream's card) is read again, at most (seconds)."""


@dataclass(frozen=True, slots=True)
class RegistrySource:
    """The agents an accord registry finds for `query` and `filters` (as `Client.discover`)."""

    url: str
    query: str = ""
    filters: Mapping[str, str | Sequence[str]] = field(default_factory=dict)

    async def cards(self) -> list[AgentCard]:
        return await discover(self.url, self.query, self.filters)


@dataclass(slots=True)
class UpstreamOptions:
    """How the gateway calls every upstream (as `accord.gateway` takes them)."""

    credentials: Credentials | Sequence[Credential] | None = None
    transport: str | None = None
    version: str | None = None


class UpstreamSet:
    """The upstreams of a gateway by name: those at `urls` (named by the mapping's keys) and
    those `registry` finds (named after their cards), each with its card, its executor and
    its skills in `table`. `refresh` reads them again when `interval` has passed; an upstream
    that leaves keeps its executor, so its tasks still reach it, but its skills leave the
    table. Each of `watchers` is called once the upstreams or their cards changed."""

    def __init__(
        self,
        urls: Sequence[str] | Mapping[str, str],
        registry: RegistrySource | None = None,
        options: UpstreamOptions | None = None,
        interval: float | None = REFRESH_INTERVAL,
    ) -> None:
        self.urls: dict[str, str] = {}
        """Each upstream given by URL, by name (once `load` named those given unnamed)."""
        self._given = given_urls(urls)
        self.registry = registry
        self.options = options or UpstreamOptions()
        self.interval = interval
        self.cards: dict[str, AgentCard] = {}
        self.executors: dict[str, GatewayExecutor] = {}
        self.table = SkillTable()
        self.watchers: list[Callable[[], None]] = []
        self._read_at = 0.0
        self._reading = asyncio.Lock()

    def url(self, name: str) -> str:
        return self.executors[name].upstream.url

    async def load(self) -> None:
        """Read every upstream's card now (A2AClientError or A2AError for one that cannot be
        read: at start, every upstream must answer); those given without a name are named
        after their cards."""
        for given, url in self._given:
            if given is None:
                card = await self._card(url, url, strict=True)
                assert card is not None
                named = {name: where for name, where in self._given if name is not None}
                given = unique_name(slug(card.name), {**self.urls, **named})
            self.urls[given] = url
        self._adopt(await self._read(strict=True))

    async def refresh(self) -> None:
        """Read the upstreams again when `interval` has passed since the last reading; one
        that cannot be read keeps the card it had, a registry that cannot keeps its agents."""
        if self.interval is None or time.monotonic() - self._read_at < self.interval:
            return
        async with self._reading:
            if time.monotonic() - self._read_at < self.interval:
                return
            self._adopt(await self._read(strict=False))

    async def _read(self, *, strict: bool) -> dict[str, tuple[str, AgentCard]]:
        found: dict[str, tuple[str, AgentCard]] = {}
        for name, url in self.urls.items():
            card = await self._card(url, name, strict)
            if card is not None:
                found[name] = (url, card)
        if self.registry is not None:
            try:
                listed = await self.registry.cards()
            except (A2AClientError, A2AError) as exc:
                if strict:
                    raise
                log.warning("the registry at %s cannot be read: %s", self.registry.url, exc)
                listed = [self.cards[n] for n in self.cards if n not in self.urls]
            given = {url.rstrip("/") for url in self.urls.values()}
            named = {ex.upstream.url: name for name, ex in self.executors.items()}
            for card in sorted(listed, key=lambda card: card.url):  # names the same every time
                if card.url.rstrip("/") in given:
                    continue
                given.add(card.url.rstrip("/"))
                name = named.get(card.url) or unique_name(
                    slug(card.name), {**self.executors, **found}
                )
                found[name] = (card.url, card)
        return found

    async def _card(self, url: str, name: str, strict: bool) -> AgentCard | None:
        try:
            async with Client(url, credentials=self.options.credentials) as client:
                return await client.get_card()
        except (A2AClientError, A2AError) as exc:
            if strict:
                raise
            log.warning("the card of upstream %s (%s) cannot be read: %s", name, url, exc)
            return self.cards.get(name)

    def _adopt(self, found: Mapping[str, tuple[str, AgentCard]]) -> None:
        for name, (url, card) in found.items():
            known = self.executors.get(name)
            if known is None or known.upstream.url != url or known.upstream.card != card:
                options = self.options
                upstream = Upstream(
                    url,
                    card,
                    credentials=options.credentials,
                    transport=options.transport,
                    version=options.version,
                )
                self.executors[name] = GatewayExecutor(upstream)
        cards = {name: card for name, (_, card) in found.items()}
        self._read_at = time.monotonic()
        if cards == self.cards:
            return
        self.cards = cards
        self.table = SkillTable.of(cards)
        for line in self.table.collision_lines():
            log.warning("%s", line)
        for watcher in self.watchers:
            watcher()


def slug(name: str) -> str:
    """An upstream's name made from its card's: lower case, words joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent"


def unique_name(name: str, taken: Mapping[str, object]) -> str:
    if name not in taken:
        return name
    number = 2
    while f"{name}-{number}" in taken:
        number += 1
    return f"{name}-{number}"


def given_urls(urls: Sequence[str] | Mapping[str, str]) -> list[tuple[str | None, str]]:
    """The upstreams `urls` names, in order: a mapping's items, a list's `NAME=URL` items and
    URLs without a name (None: named after their cards)."""
    if isinstance(urls, Mapping):
        return list(urls.items())
    given: list[tuple[str | None, str]] = []
    for item in urls:
        name, sep, url = item.partition("=")
        given.append((name, url) if sep and name and "://" not in name else (None, item))
    return given
