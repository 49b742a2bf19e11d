"""The agent card over HTTP GET: well-known paths, 0.2's extended card, ETag, conditional GET."""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic_core import to_json
from starlette.requests import Request
from starlette.responses import Response

from accord.agents.agent import Agent
from accord.codecs.card import union_card
from accord.server.interfaces import ServedInterfaces

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
EXTENDED_CARD_PATH = "/agent/authenticatedExtendedCard"
"""Where A2A 0.2 clients GET the extended card: `{card url}/../agent/authenticatedExtendedCard`."""

Which = Literal["public", "extended"]
CACHE_CONTROL: dict[Which, str] = {
    "public": "public, max-age=300",
    "extended": "private, max-age=300",  # meant for one authenticated client
}


class AgentCardEndpoint:
    """Serves the agent's cards by HTTP GET, each in the one shape every version reads.

    The public card is at the well-known paths (0.3 and 1.0's, and 0.2's); the extended card
    goes through the request pipeline, authenticated (`accord.server.extended_card`). Both
    are dressed with the interfaces the server answers (`interfaces`) and rendered as the union
    card of `accord.codecs.card`.
    """

    def __init__(self, agent: Agent, interfaces: ServedInterfaces) -> None:
        self.agent = agent
        self.interfaces = interfaces
        self._cache: dict[tuple[Which, str], tuple[bytes, str]] = {}

    async def public(self, request: Request) -> Response:
        return self._serve(request, "public")

    def _serve(self, request: Request, which: Which) -> Response:
        body, etag = self._render(which, str(request.base_url))
        headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL[which]}
        if etag_matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    def _render(self, which: Which, base_url: str) -> tuple[bytes, str]:
        cached = self._cache.get((which, base_url))
        if cached is None:
            card = self.agent.extended_card if which == "extended" else self.agent.card("")
            assert card is not None
            body = to_json(union_card(self.interfaces.card(card, base_url)))
            cached = body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            if len(self._cache) < 64:  # one entry per card and distinct Host; bounded
                self._cache[which, base_url] = cached
        return cached


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    candidates = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in candidates or etag in candidates
