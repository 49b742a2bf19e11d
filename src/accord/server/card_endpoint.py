"""The agent card over HTTP GET: well-known paths, 0.2's extended card, ETag, conditional GET."""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic_core import to_json
from starlette.requests import Request
from starlette.responses import Response

from accord.agents.agent import Agent
from accord.codecs.card import union_card
from accord.errors import AuthenticatedExtendedCardNotConfigured
from accord.keys.cards import JWKS_PATH, sign_card
from accord.keys.store import KeyStore
from accord.server.interfaces import ServedInterfaces

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
EXTENDED_CARD_PATH = "/agent/authenticatedExtendedCard"
"""Where A2A 0.2 clients GET the extended card: `{card url}/../agent/authenticatedExtendedCard`."""

Which = Literal["public", "extended"]
CACHE_CONTROL: dict[Which, str] = {
    "public": "public, max-age=300",
    "extended": "private, max-age=300",  # meant for one authenticated client
}


class CardSigner:
    """Signs a card as encoded for one shape (the union card, a version's card) with the key
    store's active key, naming the JWKS at `base_url` as its `jku`."""

    def __init__(self, keys: KeyStore) -> None:
        self.keys = keys

    def __call__(self, body: bytes, base_url: str) -> bytes:
        jku = base_url.rstrip("/") + JWKS_PATH
        return to_json(sign_card(json.loads(body), self.keys.active(), jku=jku))


class AgentCardEndpoint:
    """Serves the agent's cards by HTTP GET, each in the one shape every version reads.

    The public card is at the well-known paths (0.3 and 1.0's, and 0.2's), the extended card
    at 0.2's path (0.3 and 1.0 clients ask for it with a call of their binding instead). Both
    are dressed with the interfaces the server answers (`interfaces`) and rendered as the union
    card of `accord.codecs.card`. With `keys`, each card served carries a signature by the key
    store's active key over exactly what it says (`accord.keys.cards`), naming the JWKS served
    at `JWKS_PATH` as its `jku`.
    """

    def __init__(
        self, agent: Agent, interfaces: ServedInterfaces, keys: KeyStore | None = None
    ) -> None:
        self.agent = agent
        self.interfaces = interfaces
        self.keys = keys
        self._cache: dict[tuple[Which, str, str], tuple[bytes, str]] = {}

    async def jwks(self, request: Request) -> Response:
        document = self.keys.jwks() if self.keys is not None else {"keys": []}
        headers = {"Cache-Control": "public, max-age=300"}
        return Response(to_json(document), media_type="application/jwk-set+json", headers=headers)

    async def public(self, request: Request) -> Response:
        return self._serve(request, "public")

    async def extended(self, request: Request) -> Response:
        if self.agent.extended_card is None:
            error = AuthenticatedExtendedCardNotConfigured(
                "this agent has no authenticated extended card"
            )
            body = to_json({"error": error.to_error_object().to_wire()})
            return Response(body, 404, media_type="application/json")
        return self._serve(request, "extended")

    def _serve(self, request: Request, which: Which) -> Response:
        body, etag = self._render(which, str(request.base_url))
        headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL[which]}
        if _matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    def _render(self, which: Which, base_url: str) -> tuple[bytes, str]:
        key = self.keys.active() if self.keys is not None else None
        entry = (which, base_url, key.kid if key is not None else "")
        cached = self._cache.get(entry)
        if cached is None:
            card = self.agent.extended_card if which == "extended" else self.agent.card("")
            assert card is not None
            body = to_json(union_card(self.interfaces.card(card, base_url)))
            if self.keys is not None:
                body = CardSigner(self.keys)(body, base_url)
            cached = body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            if len(self._cache) < 64:  # one entry per card, distinct Host and key; bounded
                self._cache[entry] = cached
        return cached


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    candidates = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in candidates or etag in candidates
