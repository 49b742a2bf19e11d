"""Agent card discovery: the well-known URLs to try, fetching them and parsing the card."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

import httpx

from accord.client.failures import http_errors
from accord.codecs.card import InvalidCard, read_card
from accord.errors import A2AClientError
from accord.types import AgentCard

if TYPE_CHECKING:
    from accord.keys.cards import TrustedKeys

WELL_KNOWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
"""Where agents publish their card: the 0.3 path first, then the 0.2 one."""
MAX_CARD_BYTES = 1024 * 1024
"""The largest card read: a card is a few kilobytes; reading on would let any URL fill memory."""


class CardTooLarge(A2AClientError):
    """The card served is larger than MAX_CARD_BYTES; nothing more of it is read."""


def card_urls(url: str) -> list[str]:
    """The URLs to try in order: `url` itself when it names a card, else both well-known paths
    (after its path: a query stays after them and a fragment is dropped, so neither cancels
    the well-known path)."""
    base = url.partition("#")[0]
    path, mark, query = base.partition("?")
    if path.rstrip("/").endswith(WELL_KNOWN_PATHS):
        return [base]
    return [path.rstrip("/") + well_known + mark + query for well_known in WELL_KNOWN_PATHS]


async def get_card_body(
    http: httpx.AsyncClient, url: str, headers: Mapping[str, str] | None = None
) -> tuple[int, bytes]:
    """The status and body of GET `url`, at most MAX_CARD_BYTES of it (CardTooLarge beyond,
    told by its Content-Length or by counting, the rest never read); httpx errors pass."""
    status, _, body = await get_card_response(http, url, headers)
    return status, body


async def get_card_response(
    http: httpx.AsyncClient, url: str, headers: Mapping[str, str] | None = None
) -> tuple[int, httpx.Headers, bytes]:
    """`get_card_body`, with the response's headers (a conditional GET's validators)."""
    async with http.stream("GET", url, headers=headers) as response:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_CARD_BYTES:
            raise CardTooLarge(_too_large(url))
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_CARD_BYTES:
                raise CardTooLarge(_too_large(url))
    return response.status_code, response.headers, bytes(body)


def _too_large(url: str) -> str:
    return f"the agent card at {url} is larger than {MAX_CARD_BYTES // 1024 // 1024} MiB"


def parse_card(body: bytes, source: str) -> AgentCard:
    """The card in `body`, fetched from `source`; A2AClientError when it is not one."""
    return card_from_document(read_document(body, source), source)


def read_document(body: bytes, source: str) -> object:
    try:
        return json.loads(body)
    except ValueError:
        raise A2AClientError(f"the agent card at {source} is not JSON") from None


async def check_signature(
    document: object, source: str, trusted_keys: TrustedKeys, *, which: str = "agent card"
) -> str:
    """The id of the key among `trusted_keys` that signed the card `document` (`which` card,
    from `source`, for the error); A2AClientError when none did, or when the card declares
    security schemes but no requirement, which its signature cannot vouch for."""
    from accord.keys.cards import (  # jwt, cryptography: only when used
        CardSignatureError,
        requirements_unsigned,
        verify_card,
    )

    if not isinstance(document, dict):
        raise A2AClientError(f"the {which} at {source} is not a JSON object")
    try:
        kid = await verify_card(document, trusted_keys)
    except CardSignatureError as exc:
        raise A2AClientError(f"the {which} at {source} is not trusted: {exc}") from None
    if requirements_unsigned(document):
        raise A2AClientError(
            f"the {which} at {source} is not trusted: it declares security schemes but no"
            " requirement, and its signature cannot tell that from requirements without scopes"
            " (the canonical form leaves those out), which may have been removed on the way"
        )
    return kid


def card_from_document(document: object, source: str) -> AgentCard:
    """The card `document` (of any version) fetched from `source`; A2AClientError when it is
    none."""
    try:
        return read_card(document)
    except InvalidCard as exc:
        raise A2AClientError(f"the agent card at {source} is not valid: {exc}") from None


async def fetch_card(
    http: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str] | None = None,
    trusted_keys: TrustedKeys | None = None,
) -> AgentCard:
    """Resolve the card of the agent at `url` (a base URL or a card URL); with
    `trusted_keys`, only a card signed by one of them."""
    source, document = await fetch_card_document(http, url, headers)
    if trusted_keys is not None:
        await check_signature(document, source, trusted_keys)
    return card_from_document(document, source)


async def fetch_card_document(
    http: httpx.AsyncClient, url: str, headers: Mapping[str, str] | None = None
) -> tuple[str, object]:
    """The URL the card of the agent at `url` was found at, and its JSON as served."""
    candidates = card_urls(url)
    for candidate in candidates:
        with http_errors("GET", candidate):
            status, body = await get_card_body(http, candidate, headers)
        if status == 404 and candidate != candidates[-1]:
            continue
        if status == 404 and len(candidates) > 1:
            raise A2AClientError(
                f"no agent card at {url}: GET {' and '.join(candidates)} answered HTTP 404",
                status_code=404,
            )
        if status != 200:
            raise A2AClientError(f"GET {candidate} answered HTTP {status}", status_code=status)
        return candidate, read_document(body, candidate)
    raise AssertionError("unreachable: the last candidate always returns or raises")
