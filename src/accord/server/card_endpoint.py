"""The agent card over HTTP GET: well-known paths, a shape per version, conditional GET."""

from __future__ import annotations

import hashlib
import json
import time
from email.utils import formatdate, parsedate_to_datetime
from typing import Literal

from pydantic_core import to_json
from starlette.requests import Request
from starlette.responses import Response

from accord.agents.agent import Agent
from accord.codecs import VERSION_HEADER, named_version, parse_version
from accord.codecs.card import CardShape, card_shape
from accord.errors import AuthenticatedExtendedCardNotConfigured, VersionNotSupported
from accord.keys.cards import JWKS_PATH, sign_card
from accord.keys.store import KeyStore
from accord.server.interfaces import ServedInterfaces
from accord.types import AgentCard

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
    store's active key, naming as its `jku` the JWKS at `public_url` (path kept), or else at
    the base URL the request came in at."""

    def __init__(self, keys: KeyStore, public_url: str | None = None) -> None:
        self.keys = keys
        self.public_url = public_url

    def __call__(self, body: bytes, base_url: str) -> bytes:
        jku = (self.public_url or base_url).rstrip("/") + JWKS_PATH
        return to_json(sign_card(json.loads(body), self.keys.active(), jku=jku))


class AgentCardEndpoint:
    """Serves the agent's cards by HTTP GET.

    The public card is at the well-known paths (0.3 and 1.0's, and 0.2's), the extended card
    at 0.2's path (0.3 and 1.0 clients ask for it with a call of their binding instead). Both
    are dressed with the interfaces the server answers (`interfaces`). A request naming
    `A2A-Version` 1.x gets the 1.0 AgentCard exactly; any other gets the union card of
    `accord.codecs.card`, which every version reads. The card last changed when the server
    started (`Last-Modified`), or later when the agent's card did (`Agent.card_revision`): it
    is then rendered (and signed) again. With `keys`, each shape served carries a signature
    by the key store's active key over exactly what it says (`accord.keys.cards`), naming the
    JWKS served at `JWKS_PATH` (below the public URL, if the interfaces have one) as its
    `jku`.
    """

    def __init__(
        self, agent: Agent, interfaces: ServedInterfaces, keys: KeyStore | None = None
    ) -> None:
        self.agent = agent
        self.interfaces = interfaces
        self.keys = keys
        self._signer = CardSigner(keys, interfaces.public_url) if keys is not None else None
        self._cache: dict[tuple[Which, CardShape, str, str], tuple[bytes, str]] = {}
        self._revision = agent.card_revision
        self._changed_at(time.time())

    def _changed_at(self, when: float) -> None:
        self._changed = int(when)  # HTTP dates have whole seconds
        self._last_modified = formatdate(self._changed, usegmt=True)

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
        shape = _shape(request)
        # With a public URL every card is the same whatever Host the request names.
        base_url = self.interfaces.public_url or str(request.base_url)
        if self.agent.card_revision != self._revision:  # rendered again from now on
            self._revision = self.agent.card_revision
            self._cache.clear()
            self._changed_at(self.agent.card_changed or time.time())
        body, etag = self._render(which, shape, base_url)
        headers = {
            "ETag": etag,
            "Last-Modified": self._last_modified,
            "Cache-Control": CACHE_CONTROL[which],
            "Vary": VERSION_HEADER,
        }
        if self._not_modified(request, etag):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    def _not_modified(self, request: Request, etag: str) -> bool:
        """RFC 9110 13.1: `If-None-Match` decides when sent; else `If-Modified-Since`."""
        if_none_match = request.headers.get("if-none-match")
        if if_none_match is not None:
            return _matches(if_none_match, etag)
        since = _http_date(request.headers.get("if-modified-since"))
        return since is not None and since >= self._changed

    def _render(self, which: Which, shape: CardShape, base_url: str) -> tuple[bytes, str]:
        kid = self.keys.active().kid if self.keys is not None else ""
        entry = (which, shape, base_url, kid)
        cached = self._cache.get(entry)
        if cached is None:
            card: AgentCard | None = (
                self.agent.extended_card if which == "extended" else self.agent.card("")
            )
            assert card is not None
            body = to_json(shape(self.interfaces.card(card, base_url)))
            if self._signer is not None:
                body = self._signer(body, base_url)
            cached = body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
            if len(self._cache) < 64:  # one entry per card, shape, Host and key; bounded
                self._cache[entry] = cached
        return cached


def _shape(request: Request) -> CardShape:
    """The card's shape for the version a request names (a card fetch names no method, so an
    unknown version is no reason to refuse it: it gets the shape of none named)."""
    named = named_version(request.headers, request.query_params)
    try:
        version = parse_version(named) if named is not None else None
    except VersionNotSupported:
        version = None
    return card_shape(version)


def _matches(if_none_match: str, etag: str) -> bool:
    candidates = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in candidates or etag in candidates


def _http_date(value: str | None) -> float | None:
    """The POSIX time of an HTTP date; None when absent or not a date (which is ignored)."""
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
