"""Fetching a card for the registry (conditionally, when it has one already) and checking it:
the specification's schema for each version it is written in, accord's reading of it, and its
signature when keys are trusted. Every refusal says why, reason by reason."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from accord.client.card_resolver import CardTooLarge, card_urls, check_signature, get_card_response
from accord.codecs.card import CARD_SCHEMAS, InvalidCard, card_versions, read_card
from accord.codecs.versions import ProtocolVersion
from accord.errors import A2AClientError
from accord.types import AgentCard

if TYPE_CHECKING:
    from accord.keys.cards import TrustedKeys

Json = dict[str, Any]
LEGACY = set(CARD_SCHEMAS) - {ProtocolVersion.V0_3.value, ProtocolVersion.V1_0.value}
"""Versions (0.2) whose cards are accepted even where they break their schema (the problems are kept
as notes): what a 0.2 agent serves predates the schemas the registry checks against."""


class CardRejected(Exception):
    """A card the registry does not take; `reasons` says why, one problem each."""

    def __init__(self, url: str, reasons: list[str]) -> None:
        super().__init__(f"the card at {url} is refused: " + "; ".join(reasons))
        self.url = url
        self.reasons = reasons


class CardUnreachable(Exception):
    """No answer, or no card, at a URL: the agent is down (or was never there)."""


@dataclass(frozen=True, slots=True)
class Fetched:
    """A card as served: the URL it came from, its JSON, and the validators to ask again with."""

    url: str
    document: Json
    etag: str | None
    last_modified: str | None


@dataclass(frozen=True, slots=True)
class CheckedCard:
    """A card the registry takes: read, with the versions it is written in, the id of the key
    that signed it (when keys are trusted) and the problems of a legacy card (notes)."""

    card: AgentCard
    versions: list[str]
    signed_by: str | None
    notes: list[str]


async def fetch(
    http: httpx.AsyncClient,
    url: str,
    etag: str | None = None,
    last_modified: str | None = None,
) -> Fetched | None:
    """The card at `url` (a card URL, or an agent's base URL: its well-known paths are tried);
    None when the server says it has not changed since `etag`/`last_modified` (304).
    CardUnreachable when nothing answers or no card is there; CardRejected when what is
    there is no JSON object."""
    conditional = {"Accept": "application/json"}
    if etag:
        conditional["If-None-Match"] = etag
    if last_modified:
        conditional["If-Modified-Since"] = last_modified
    answers = []
    for candidate in card_urls(url):
        try:
            status, headers, body = await get_card_response(http, candidate, conditional)
        except CardTooLarge as exc:
            raise CardRejected(candidate, [str(exc)]) from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise CardUnreachable(f"GET {candidate} failed: {exc or type(exc).__name__}") from None
        if status == 304:
            return None
        if status == 200:
            return Fetched(candidate, _json_object(candidate, body), *_validators(headers))
        answers.append(f"GET {candidate} answered HTTP {status}")
        if status != 404:
            break
    raise CardUnreachable("; ".join(answers))


def _validators(headers: httpx.Headers) -> tuple[str | None, str | None]:
    return headers.get("etag"), headers.get("last-modified")


def _json_object(url: str, body: bytes) -> Json:
    try:
        document = json.loads(body)
    except ValueError:
        raise CardRejected(url, ["it is not JSON"]) from None
    if not isinstance(document, dict):
        raise CardRejected(url, ["it is JSON but not an object"])
    return document


async def check(fetched: Fetched, trusted_keys: TrustedKeys | None = None) -> CheckedCard:
    """`fetched`'s card, checked; CardRejected with every reason found when it is refused."""
    document, url = fetched.document, fetched.url
    reasons, notes = schema_problems(document)
    try:
        card = read_card(document)
    except InvalidCard as exc:
        reasons.append(f"accord cannot read it: {exc}")
    if reasons:
        raise CardRejected(url, reasons)
    signed_by = None
    if trusted_keys is not None:
        try:
            signed_by = await check_signature(document, url, trusted_keys)
        except A2AClientError as exc:
            raise CardRejected(url, [str(exc)]) from None
    return CheckedCard(card, card_versions(document), signed_by, notes)


def schema_problems(document: Json) -> tuple[list[str], list[str]]:
    """The reasons the specification's schema of each version `document` is written in gives
    against it, and those of legacy versions, which are notes only. Without jsonschema
    installed (the `registry` extra) nothing is checked here: accord's reading of the card
    still is."""
    try:
        from accord.codecs.card_schemas import check_card  # needs jsonschema
    except ImportError:
        return [], []
    reasons: list[str] = []
    notes: list[str] = []
    for result in check_card(document):
        told = notes if result.version in LEGACY else reasons
        told.extend(f"A2A {CARD_SCHEMAS[result.version]}: {p}" for p in result.problems)
    return reasons, notes
