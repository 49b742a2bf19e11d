"""The host's own card and the factory that puts registry, executor and routes together."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import accord
from accord.auth import Security
from accord.host.curators import Curators
from accord.host.discovered import configured_search
from accord.host.executor import HostExecutor
from accord.host.registry import (
    AgentRegistry,
    configured_credentials,
    initial_urls,
    registry_path,
)
from accord.host.routes import registry_routes
from accord.types import AgentSkill
from accord.web.webhook_guard import WebhookGuard

SKILLS = [
    AgentSkill(
        id="delegate",
        name="Delegate to agents",
        description=(
            "Finds the agents whose skills fit the request (one or several, a request that "
            "joins two with 'and' may go to two), asks them over A2A, relays their questions "
            "and forms to you and your answers back, and gathers their results, each saying "
            "which agent made it."
        ),
        tags=["multi-agent", "routing", "delegation", "orchestration"],
        examples=[
            "convert 100 USD to EUR and draw a picture of a cat",
            "Who directed Alien?",
            "reimburse my taxi, 42.50 EUR on 2025-03-14",
        ],
    ),
    AgentSkill(
        id="list_agents",
        name="List the agents",
        description="Says which agents the host knows and what each can do.",
        tags=["agents", "directory"],
        examples=["Which agents do you know?", "list agents"],
    ),
]


def host_agent(
    registry: AgentRegistry | Path | str | None = None,
    agents: Sequence[str] | None = None,
    *,
    token: str | None = None,
    security: Security | None = None,
    fetch_guard: WebhookGuard | None = None,
    discover: str | None = None,
) -> accord.Agent:
    """The host: delegating to the agents in `registry` (an AgentRegistry, or the path of its
    file; default: `ACCORD_HOST_REGISTRY`, else `.accord/host/agents.json`), knowing `agents`
    (card or base URLs; default: `ACCORD_HOST_AGENTS`) from the start, with the credentials
    of `ACCORD_HOST_CREDENTIALS` for agents whose entry gives none.

    Agents are added and removed over HTTP (`/host/agents`) by a caller presenting `token`
    (default: `ACCORD_HOST_TOKEN`) as a bearer token, or, with `security` (the host's own, for
    its A2A calls too), one it authenticates with the scope `host:curate`; by nobody without
    either. With `fetch_guard`, an agent added over HTTP must be at an address it allows.
    With `discover` (default: `ACCORD_HOST_DISCOVER`), a search of an accord registry (its
    URL with the search's query, `http://host:port?q=currency`), the agents it finds are
    known too (docs/registry.md)."""
    if not isinstance(registry, AgentRegistry):
        path = registry if registry is not None else registry_path()
        initial = initial_urls() if agents is None else agents
        registry = AgentRegistry(path, initial, configured_credentials(), fetch_guard,
                                 configured_search(discover))  # fmt: skip
    elif fetch_guard is not None:
        registry.guard = fetch_guard
    return accord.Agent(
        HostExecutor(registry),
        name="Host",
        description=(
            "A multi-agent host: delegates each request to the remote A2A agents whose "
            "skills fit it, and brings their questions, forms and results back to you."
        ),
        skills=SKILLS,
        # Files of any type: each goes to the chosen agents that take it (the user is told of
        # one none of them takes).
        input_modes=["text/plain", "application/json", "*/*"],
        output_modes=["text/plain", "application/json", "image/png"],
        security=security,
        routes=registry_routes(registry, Curators(token)),
    )
