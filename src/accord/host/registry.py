"""The remote agents the host knows: added by URL, kept in a small JSON file of their own."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from accord.client import Credentials, fetch_card, parse_card
from accord.client.credential_settings import (
    CredentialSettingsError,
    credential_settings,
    credentials_from_settings,
    described,
)
from accord.client.interfaces import select_interface
from accord.client.transports import TRANSPORTS
from accord.errors import A2AClientError
from accord.host.discovered import DiscoveredAgents
from accord.types import AgentCard
from accord.web.guarded_transport import GuardedTransport
from accord.web.webhook_guard import WebhookGuard, WebhookRefused

log = logging.getLogger(__name__)

REGISTRY_VARIABLE = "ACCORD_HOST_REGISTRY"
"""The file the host keeps its agents in (default `DEFAULT_REGISTRY_PATH`)."""
AGENTS_VARIABLE = "ACCORD_HOST_AGENTS"
"""Agents to know from the start: comma-separated card or base URLs."""
CREDENTIALS_VARIABLE = "ACCORD_HOST_CREDENTIALS"
"""Credentials per agent URL, as JSON: `{"http://host:port": {"apiKey": "..."}, ...}`."""
DEFAULT_REGISTRY_PATH = Path(".accord/host/agents.json")
"""Next to the default task stores (`.accord/NAME.db`)."""
CARD_TIMEOUT = httpx.Timeout(10.0)
RETRY_SECONDS = 5.0
"""How long to wait before trying again a start-up agent that could not be reached."""

Json = dict[str, Any]


class RegistryError(Exception):
    """A URL that names no agent the host can use; the message says why, in words."""


@dataclass(frozen=True, slots=True)
class RemoteAgent:
    """An agent the host may delegate to: the URL it was added by, its card, and the
    credentials to present to it (a credentials object, see `credential_settings`)."""

    url: str
    card: AgentCard
    credentials: Json | None = None

    @property
    def name(self) -> str:
        return self.card.name

    def entry(self) -> Json:
        """The agent as the management API lists it: url, name, description, skills, card,
        and which credentials it is given (their names only, never their values)."""
        card = _card_json(self.card)
        entry: Json = {
            "url": self.url,
            "name": self.card.name,
            "description": self.card.description,
            "skills": card.get("skills", []),
            "card": card,
        }
        if self.credentials:
            entry["credentials"] = described(self.credentials)
        return entry


def _card_json(card: AgentCard) -> Json:
    return card.model_dump(mode="json", by_alias=True, exclude_none=True)


def normalized_url(url: object) -> str:
    """`url` without surrounding space or trailing slash; RegistryError unless http(s)."""
    if not isinstance(url, str) or not url.strip():
        raise RegistryError('give the agent\'s URL as a string: {"url": "http://host:port"}')
    text = url.strip().rstrip("/")
    try:
        parsed = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise RegistryError(f"{text!r} is not a URL: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise RegistryError(f"{text!r} is not an http:// or https:// URL")
    return text


def initial_urls(value: str | None = None) -> list[str]:
    """The URLs in `value` (default: the `ACCORD_HOST_AGENTS` variable), comma-separated."""
    text = os.environ.get(AGENTS_VARIABLE, "") if value is None else value
    return [url.strip() for url in text.split(",") if url.strip()]


def configured_credentials(value: str | None = None) -> dict[str, Json]:
    """The credentials per agent URL in `value` (default: the `ACCORD_HOST_CREDENTIALS`
    variable); ValueError saying what is wrong."""
    text = os.environ.get(CREDENTIALS_VARIABLE, "") if value is None else value
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except ValueError:
        raise ValueError(f"{CREDENTIALS_VARIABLE} is not JSON") from None
    if not isinstance(document, dict):
        raise ValueError(f'{CREDENTIALS_VARIABLE} must map URLs to credentials: {{"URL": {{...}}}}')
    try:
        return {normalized_url(url): credential_settings(data) for url, data in document.items()}
    except (RegistryError, CredentialSettingsError) as exc:
        raise ValueError(f"{CREDENTIALS_VARIABLE}: {exc}") from None


def registry_path() -> Path:
    """The registry file the environment names (`ACCORD_HOST_REGISTRY`), or the default."""
    configured = os.environ.get(REGISTRY_VARIABLE, "").strip()
    return Path(configured) if configured else DEFAULT_REGISTRY_PATH


async def resolve(url: object, guard: WebhookGuard | None = None) -> RemoteAgent:
    """The agent at `url` with its card; RegistryError when it cannot be reached or used, or,
    with `guard`, when it or the interface the host would call is at an address `guard`
    refuses (loopback, private, link-local, metadata: checked when connecting)."""
    url = normalized_url(url)  # a str from here on
    transport = GuardedTransport(guard) if guard is not None else None
    try:
        async with httpx.AsyncClient(timeout=CARD_TIMEOUT, transport=transport) as http:
            card = await fetch_card(http, url)
        interface = select_interface(card, frozenset(TRANSPORTS))
        if guard is not None:
            await guard.check(interface.url)
    except A2AClientError as exc:
        raise RegistryError(f"{url}: {exc}") from None
    except WebhookRefused as exc:
        raise RegistryError(f"{url}: its interface {interface.url} is refused: {exc}") from None
    return RemoteAgent(url, card)


class AgentRegistry:
    """The agents the host knows, in the order they were added, saved in the file at `path`.

    The file is read on first use and again whenever it changes (another process may write
    it). `initial` URLs are added on first use unless already known; one that cannot be
    reached then is tried again later, at most every `RETRY_SECONDS`.

    Credentials for an agent come from its entry (given when it was added), else from
    `credentials` (URL -> credentials object, e.g. from `ACCORD_HOST_CREDENTIALS`). The file
    holds secrets then, so it is kept readable by its owner only.

    With `guard`, an agent `add`ed (over HTTP) must be at an address it allows, and so must
    the interface the host would call; the operator's `initial` agents are not checked.
    With `discovered` (a registry search), the agents it finds are known too, after these.
    """

    def __init__(
        self,
        path: Path | str,
        initial: Sequence[str] = (),
        credentials: Mapping[str, Json] | None = None,
        guard: WebhookGuard | None = None,
        discovered: DiscoveredAgents | None = None,
    ) -> None:
        self.path = Path(path)
        self.guard = guard
        self.discovered = discovered
        self._configured = {
            normalized_url(url): credential_settings(data)
            for url, data in (credentials or {}).items()
        }
        self._agents: dict[str, RemoteAgent] = {}
        self._loaded_stamp: tuple[int, int] | None = None
        self._lock = threading.Lock()  # the file is shared by event loops and threads
        self._pending = list(dict.fromkeys(initial))
        self._next_try = 0.0

    async def agents(self) -> list[RemoteAgent]:
        """Every agent known now (start-up agents reached so far included), then those the
        registry search `discovered` finds that the list does not have."""
        if self._pending and time.monotonic() >= self._next_try:
            await self._add_pending()
        with self._lock:
            self._reload()
            listed = list(self._agents.values())
        if self.discovered is None:
            return listed
        known = {agent.url for agent in listed} | {agent.card.url for agent in listed}
        found = await self.discovered.agents()
        return listed + [RemoteAgent(u, c) for u, c in found if not {u, c.url} & known]

    async def add(self, url: object, credentials: object = None) -> RemoteAgent:
        """Fetch the card at `url` and keep the agent (again, with its card refreshed, if
        known) with `credentials` (a credentials object; None keeps those it had, `{}` drops
        them); RegistryError, saying why, when they are unusable or no usable agent answers."""
        try:
            settings = None if credentials is None else credential_settings(credentials)
        except CredentialSettingsError as exc:
            raise RegistryError(f"credentials: {exc}") from None
        agent = await resolve(url, self.guard)
        with self._lock:
            self._reload()
            known = self._agents.get(agent.url)
            if settings is None and known is not None:
                settings = known.credentials
            agent = replace(agent, credentials=settings or None)
            self._agents[agent.url] = agent
            self._save()
        return agent

    def credentials_for(self, url: str) -> Credentials | None:
        """The credentials to present to the agent added by `url` (None: none are given)."""
        with self._lock:
            self._reload()
            known = self._agents.get(url)
        settings = known.credentials if known is not None else None
        try:
            return credentials_from_settings(settings or self._configured.get(url))
        except CredentialSettingsError as exc:
            log.error("host: ignoring the credentials for %s: %s", url, exc)
            return None

    async def remove(self, url: str) -> bool:
        """Forget the agent added by `url`; False if it was not known."""
        url = normalized_url(url)
        with self._lock:
            self._reload()
            removed = self._agents.pop(url, None) is not None
            if removed:
                self._save()
        return removed

    async def _add_pending(self) -> None:
        """Fetch the start-up agents not known yet, all at once; keep them in the given order."""
        with self._lock:
            self._reload()
            known = set(self._agents)
        urls: list[str] = []
        for url in self._pending:
            try:
                if normalized_url(url) not in known:
                    urls.append(url)
            except RegistryError as exc:  # never going to work: say so once
                log.error("host: not adding the agent %r: %s", url, exc)
        found = await asyncio.gather(*(resolve(url) for url in urls), return_exceptions=True)
        still: list[str] = []
        with self._lock:
            self._reload()
            for url, agent in zip(urls, found, strict=True):
                if isinstance(agent, RemoteAgent):
                    self._agents.setdefault(agent.url, agent)
                else:
                    log.warning("host: cannot add the agent %s yet: %s", url, agent)
                    still.append(url)
            if len(still) < len(urls):
                self._save()
        self._pending = still
        self._next_try = time.monotonic() + RETRY_SECONDS

    def _stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def _reload(self) -> None:
        stamp = self._stamp()
        if stamp == self._loaded_stamp:
            return
        self._loaded_stamp = stamp
        self._agents = {}
        if stamp is None:
            return
        try:
            entries = json.loads(self.path.read_text(encoding="utf-8")).get("agents", [])
        except (OSError, ValueError, AttributeError) as exc:
            log.error("host: ignoring the unreadable agent registry %s: %s", self.path, exc)
            return
        for entry in entries:
            try:
                card = parse_card(json.dumps(entry["card"]).encode(), str(self.path))
                settings = credential_settings(entry.get("credentials")) or None
                self._agents[normalized_url(entry["url"])] = RemoteAgent(
                    entry["url"], card, settings
                )
            except (
                A2AClientError,
                RegistryError,
                CredentialSettingsError,
                LookupError,
                TypeError,
            ) as exc:
                log.error("host: skipping an entry of %s: %s", self.path, exc)

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        document = {"agents": [_saved(agent) for agent in self._agents.values()]}
        temporary = self.path.with_name(self.path.name + ".tmp")
        # Owner only: the file may hold credentials (made so before anything is written).
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(descriptor, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(json.dumps(document, indent=2) + "\n")
        os.replace(temporary, self.path)
        self._loaded_stamp = self._stamp()


def _saved(agent: RemoteAgent) -> Json:
    saved: Json = {"url": agent.url, "card": _card_json(agent.card)}
    if agent.credentials:
        saved["credentials"] = agent.credentials
    return saved
