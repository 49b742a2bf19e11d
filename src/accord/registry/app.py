"""The registry served: an accord agent answering searches over A2A (the cards found come back
as DataParts), with the HTTP API's routes beside it, re-checking its cards in the background."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from starlette.applications import Starlette

import accord
from accord.agents.decorator import FunctionExecutor
from accord.auth import Security
from accord.errors import InvalidParams
from accord.registry.curators import Curators
from accord.registry.http_api import registry_routes, search_query
from accord.registry.search import SearchError, SearchQuery
from accord.registry.service import Registry
from accord.server.config import ServerConfig
from accord.types import AgentSkill, DataPart, Message, Part, Role, TextPart, new_id

A2A_RESULTS = 10
"""How many cards an A2A search answers with."""

FIND_AGENTS = AgentSkill(
    id="find_agents",
    name="Find agents",
    description=(
        "Searches the agents this registry keeps by what they do (names, descriptions, skills "
        "and tags) and answers with the matching agent cards, best first, one DataPart each."
    ),
    tags=["registry", "discovery", "agents", "search"],
    examples=["an agent that converts currencies", "who can draw pictures?"],
    input_modes=["text/plain"],
    output_modes=["text/plain", "application/json"],
)


def registry_agent(
    registry: Registry, *, security: Security | None = None, public_search: bool = True
) -> accord.Agent:
    """The registry as an agent: a message's text is searched for (or the search a DataPart
    of it asks for, see `asked`), the reply is a message with a line per agent found and each
    card as a DataPart (its metadata: the card URL and whether it answers). Changes are for
    callers `security` authenticates with the curator scope; everything else is public unless
    `public_search` is False."""

    async def find(context: accord.RequestContext) -> Message:
        query = asked(context.message)
        page = await registry.search(query)
        if not page.agents:
            summary = f"No agent kept here matches {query.text!r}."
        else:
            lines = [f"- {a.document.get('name')}: {a.url}" for a in page.agents]
            summary = f"{page.total} agent(s) match; the best:\n" + "\n".join(lines)
        parts: list[Part] = [TextPart(text=summary)]
        parts += [
            DataPart(data=a.document, metadata={"url": a.url, "status": a.status})
            for a in page.agents
        ]
        return Message(message_id=new_id(), role=Role.AGENT, parts=parts)

    return accord.Agent(
        FunctionExecutor(find, task=False),
        name="Agent registry",
        description=(
            "A curated registry of A2A agents: ask for what you need in a message and get the "
            "cards of the agents that can do it."
        ),
        skills=[FIND_AGENTS],
        output_modes=["text/plain", "application/json"],
        streaming=False,
        security=None if public_search else security,
        routes=registry_routes(registry, Curators(security)),
    )


def asked(message: Message) -> SearchQuery:
    """The search a message asks for: its text, or the query parameters of the HTTP API in a
    DataPart (`{"q": "currency", "tag": ["finance"], "limit": 5}`); InvalidParams, saying
    why, for a search that cannot be run."""
    text = " ".join(part.text for part in message.parts if isinstance(part, TextPart))
    data = next((part.data for part in message.parts if isinstance(part, DataPart)), None)
    if data is None:
        return SearchQuery(text, limit=A2A_RESULTS)
    items = [("q", text)] if text and "q" not in data else []
    for name, given in data.items():
        values = given if isinstance(given, list) else [given]
        items += [(name, str(value)) for value in values]
    try:
        query = search_query(items)
    except SearchError as exc:
        raise InvalidParams(f"the DataPart asks for a search that cannot be run: {exc}") from None
    return query if "limit" in data else replace(query, limit=A2A_RESULTS)


def create_registry_app(
    registry: Registry,
    config: ServerConfig | None = None,
    *,
    security: Security | None = None,
    public_search: bool = True,
    checks: bool = True,
    **options: Any,
) -> Starlette:
    """The registry's app: `registry_agent` served by `accord.create_app` (`config` and
    `options` are its settings), the catalog opened on start and closed on shutdown, and with
    `checks` every card re-checked each `registry.check_interval` seconds."""
    agent = registry_agent(registry, security=security, public_search=public_search)
    app = accord.create_app(agent, config, **options)
    served = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(started: Starlette) -> AsyncIterator[None]:
        await registry.open()
        checking = asyncio.create_task(registry.run_checks()) if checks else None
        try:
            async with served(started):
                yield
        finally:
            if checking is not None:
                checking.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await checking
            await registry.close()

    app.router.lifespan_context = lifespan
    return app
