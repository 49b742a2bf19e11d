"""The UI's agents page: adding an agent by URL (its card fetched and checked), and the one
accord host the UI was started with (`--host-url`): its remote agents (`GET/POST
/host/agents`), never a host found by asking an agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from accord.codecs.card_schemas import check_card
from accord.ui.cards import CardUnavailable, fetch_raw_card
from accord.ui.state import AgentEntry, UiState

HOST_ROUTE = "/host/agents"


class AgentRefused(Exception):
    """An agent could not be added; the message says why, for a person."""


@dataclass(frozen=True, slots=True)
class HostLink:
    """The accord host the UI registers agents with: its URL and the token its registration
    takes (`ACCORD_HOST_TOKEN`; None: none is sent)."""

    url: str
    token: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", self.url.strip().rstrip("/"))

    def is_host(self, agent_url: str) -> bool:
        return agent_url.rstrip("/") == self.url

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


async def load_agent(http: httpx.AsyncClient, url: str, host: HostLink | None = None) -> AgentEntry:
    """The agent at `url`: its card checked, and its remote agents if it is `host`."""
    url = url.strip()
    try:
        card_url, card = await fetch_raw_card(http, url)
    except CardUnavailable as exc:
        raise AgentRefused(str(exc)) from None
    base = card_url.split("/.well-known/", 1)[0] if "/.well-known/" in card_url else url.rstrip("/")
    listed = await host_agents(http, host) if host is not None and host.is_host(base) else None
    return AgentEntry(base, card_url, card, check_card(card), listed)


async def host_agents(http: httpx.AsyncClient, host: HostLink) -> list[Any] | None:
    """The agents the accord host delegates to; None when it has no such route."""
    try:
        response = await http.get(host.url + HOST_ROUTE, headers=host.headers())
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        listed = response.json()
    except ValueError:
        return None
    return listed if isinstance(listed, list) else None


async def register_with_host(
    http: httpx.AsyncClient, host: HostLink, url: str, credentials: dict[str, str] | None = None
) -> str | None:
    """Ask the host to delegate to the agent at `url` (presenting `credentials`, when given);
    None, or why it refused."""
    body: dict[str, Any] = {"url": url}
    if credentials is not None:
        body["credentials"] = credentials
    try:
        response = await http.post(host.url + HOST_ROUTE, json=body, headers=host.headers())
    except httpx.HTTPError as exc:
        return f"the host did not answer: {exc or type(exc).__name__}"
    if response.status_code in (200, 201):
        return None
    try:
        reason = response.json().get("error")
    except (ValueError, AttributeError):
        reason = None
    return f"the host refused it (HTTP {response.status_code}): {reason or response.text[:200]}"


async def refresh_host(http: httpx.AsyncClient, state: UiState, host: HostLink) -> None:
    """Re-read the host's remote agents, and publish them."""
    agent = state.agents.get(host.url)
    if agent is not None:
        agent.host_agents = await host_agents(http, host) or []
        state.add_agent(agent)
