"""Agents the host takes from a registry: a search of an accord registry, asked again now and
then, beside (or instead of) the agents of its own list."""

from __future__ import annotations

import logging
import os
import time
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from accord.client.card_resolver import card_from_document
from accord.client.registry import RegistryClient
from accord.errors import A2AClientError
from accord.types import AgentCard

log = logging.getLogger(__name__)

DISCOVER_VARIABLE = "ACCORD_HOST_DISCOVER"
"""A registry search whose agents the host takes: the registry's URL with the search's query
parameters (`http://127.0.0.1:8070?q=currency&tag=finance`)."""
REFRESH_SECONDS = 30.0
"""How long the agents found are used before the registry is asked again."""
MOST = 100


class DiscoveredAgents:
    """The agents (up, at most 100) that the registry search `search` finds: a registry's URL
    with the query parameters of its `/registry/agents` (`q`, `tag`, `skill`, ...). The
    registry is asked at most every `refresh` seconds; when it does not answer, the agents
    found last are used."""

    def __init__(self, search: str, refresh: float = REFRESH_SECONDS) -> None:
        parts = urlsplit(search.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{search!r} is not a registry's http:// or https:// URL")
        self.registry_url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        self.query = ""
        self.filters: dict[str, list[str]] = {}
        for name, value in parse_qsl(parts.query):
            if name == "q":
                self.query = value
            else:
                self.filters.setdefault(name, []).append(value)
        self.refresh = refresh
        self._found: list[tuple[str, AgentCard]] = []
        self._asked_at: float | None = None

    async def agents(self) -> list[tuple[str, AgentCard]]:
        """The card URL and card of each agent found, best match first."""
        now = time.monotonic()
        if self._asked_at is None or now - self._asked_at >= self.refresh:
            self._asked_at = now
            try:
                self._found = await self._search()
            except A2AClientError as exc:
                log.warning("host: cannot search the registry %s: %s", self.registry_url, exc)
        return list(self._found)

    async def _search(self) -> list[tuple[str, AgentCard]]:
        async with RegistryClient(self.registry_url) as registry:
            page = await registry.search(self.query, self.filters, limit=MOST)
        found = []
        for entry in page.get("agents", []):
            url = str(entry.get("url", ""))
            try:
                found.append((url, card_from_document(entry.get("card"), url)))
            except A2AClientError as exc:
                log.warning("host: skipping the registry's agent %s: %s", url, exc)
        return found


def configured_search(value: str | None = None) -> DiscoveredAgents | None:
    """The registry search `value` names (default: the `ACCORD_HOST_DISCOVER` variable), or
    None when it names none; ValueError when it is no URL."""
    text = os.environ.get(DISCOVER_VARIABLE, "") if value is None else value
    return DiscoveredAgents(text) if text.strip() else None
