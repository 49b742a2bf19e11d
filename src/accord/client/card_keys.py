"""Where an agent's signing keys are: the `jku` its card's signature names, when that is on
the origin the card came from, else the JWKS beside the card."""

from __future__ import annotations

import binascii
import json
from urllib.parse import urlsplit

import httpx
from jwt import PyJWK
from jwt.utils import base64url_decode

from accord.client.card_resolver import WELL_KNOWN_PATHS, fetch_card_document
from accord.errors import A2AClientError
from accord.keys.cards import JWKS_PATH
from accord.keys.jwks_client import JwksClient, JwksError, KeySetUnavailable

_DEFAULT_PORTS = {"http": 80, "https": 443}


def card_jwks_url(document: object, source: str) -> str:
    """The key set to check the card `document`, fetched from `source`, against: the `jku` its
    signature names when it has the card's origin (scheme, host and port: whoever serves the
    card serves those keys), else `JWKS_PATH` below the agent's URL (its path kept).
    A2AClientError when the signature names keys only on another origin: those are trusted
    only when named by the user."""
    named = _jkus(document)
    origin = _origin(source)
    for jku in named:
        if origin is not None and _origin(jku) == origin:
            return jku
    if named:
        raise A2AClientError(
            f"the agent card at {source} names its signing keys at {named[0]}, not on the"
            " card's own origin: name the keys to trust yourself (--jwks URL) if they are the"
            " agent's"
        )
    return agent_url_of(source) + JWKS_PATH


def agent_url_of(card_url: str) -> str:
    """The agent's base URL (no trailing slash) for the URL of its card, or its own URL."""
    base = card_url.rstrip("/")
    for path in WELL_KNOWN_PATHS:
        if base.endswith(path):
            return base.removesuffix(path).rstrip("/")
    return base


class AgentKeys:
    """The keys of the agent at `url`, found from its card on first use (`card_jwks_url`; an
    agent serving no card: `JWKS_PATH` below `url`): `TrustedKeys` for `verify_card` and
    `accord.push.verify`. A card that cannot be read now is looked for again next time."""

    def __init__(self, url: str, *, http: httpx.AsyncClient | None = None) -> None:
        self.url = url
        self._http = http
        self._keys: JwksClient | None = None

    async def key(self, kid: str | None) -> PyJWK:
        if self._keys is None:
            self._keys = JwksClient(await self._jwks_url(), http=self._http)
        return await self._keys.key(kid)

    async def _jwks_url(self) -> str:
        try:
            if self._http is not None:
                source, document = await fetch_card_document(self._http, self.url)
            else:
                async with httpx.AsyncClient(timeout=10.0) as http:
                    source, document = await fetch_card_document(http, self.url)
        except A2AClientError as exc:
            if exc.status_code == 404:
                return agent_url_of(self.url) + JWKS_PATH
            raise KeySetUnavailable(f"cannot find the agent's keys: {exc}") from None
        try:
            return card_jwks_url(document, source)
        except A2AClientError as exc:  # keys named elsewhere: a lasting refusal, not an outage
            raise JwksError(str(exc)) from None


def _jkus(document: object) -> list[str]:
    """The `jku` of each signature of a card, in order (unreadable headers are skipped)."""
    signatures = document.get("signatures") if isinstance(document, dict) else None
    found = []
    for signature in signatures if isinstance(signatures, list) else []:
        protected = signature.get("protected") if isinstance(signature, dict) else None
        try:
            header = json.loads(base64url_decode(protected)) if isinstance(protected, str) else {}
        except (binascii.Error, ValueError):
            continue
        jku = header.get("jku") if isinstance(header, dict) else None
        if isinstance(jku, str) and jku:
            found.append(jku)
    return found


def _origin(url: str) -> tuple[str, str, int | None] | None:
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        return None
