"""The agent card endpoint: the well-known paths, with ETag and conditional GET."""

from __future__ import annotations

import hashlib

from starlette.requests import Request
from starlette.responses import Response

from accord.agents.agent import Agent

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
CACHE_CONTROL = "public, max-age=300"


class AgentCardEndpoint:
    """Serves the agent's public card; its `url` is `public_url` or the request's base URL."""

    def __init__(self, agent: Agent, public_url: str | None = None) -> None:
        self.agent = agent
        self.public_url = public_url
        self._cache: dict[str, tuple[bytes, str]] = {}

    def card_url(self, request: Request) -> str:
        return self.public_url or str(request.base_url)

    async def handle(self, request: Request) -> Response:
        body, etag = self._render(self.card_url(request))
        headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL}
        if _matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    def _render(self, url: str) -> tuple[bytes, str]:
        cached = self._cache.get(url)
        if cached is None:
            body = self.agent.card(url).to_json()
            cached = body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            if len(self._cache) < 64:  # one entry per distinct Host; bounded against abuse
                self._cache[url] = cached
        return cached


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    candidates = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in candidates or etag in candidates
