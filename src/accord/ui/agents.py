"""The UI's agents page: adding an agent by URL (its card fetched and checked), and an accord
host's own list of remote agents (`GET/POST/DELETE /host/agents`) when the agent has one."""

from __future__ import annotations

from typing import Any

import httpx

from accord.ui.cards import CardUnavailable, check_card, fetch_raw_card
from accord.ui.state import AgentEntry, UiState

HOST_ROUTE = "/host/agents"


class AgentRefused(Exception):
    """An agent could not be added; the message says why, for a person."""


async def load_agent(http: httpx.AsyncClient, url: str) -> AgentEntry:
    """The agent at `url`: its card checked, and its remote agents if it is a host."""
    url = url.strip()
    try:
        card_url, card = await fetch_raw_card(http, url)
    except CardUnavailable as exc:
        raise AgentRefused(str(exc)) from None
    base = card_url.split("/.well-known/", 1)[0] if "/.well-known/" in card_url else url.rstrip("/")
    return AgentEntry(base, card_url, card, check_card(card), await host_agents(http, base))


async def host_agents(http: httpx.AsyncClient, base: str) -> list[Any] | None:
    """The agents an accord host at `base` delegates to; None when it has no such route."""
    try:
        response = await http.get(base + HOST_ROUTE)
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
    http: httpx.AsyncClient, host: str, url: str, credentials: dict[str, str] | None = None
) -> str | None:
    """Ask the host at `host` to delegate to the agent at `url` (presenting `credentials`,
    when given); None, or why it refused."""
    body: dict[str, Any] = {"url": url}
    if credentials is not None:
        body["credentials"] = credentials
    try:
        response = await http.post(host + HOST_ROUTE, json=body)
    except httpx.HTTPError as exc:
        return f"the host did not answer: {exc or type(exc).__name__}"
    if response.status_code in (200, 201):
        return None
    try:
        reason = response.json().get("error")
    except (ValueError, AttributeError):
        reason = None
    return f"the host refused it (HTTP {response.status_code}): {reason or response.text[:200]}"


async def refresh_hosts(http: httpx.AsyncClient, state: UiState) -> None:
    """Re-read the remote agents of every host the UI knows, and publish them."""
    for agent in list(state.agents.values()):
        if agent.host_agents is not None:
            agent.host_agents = await host_agents(http, agent.url) or []
            state.add_agent(agent)
