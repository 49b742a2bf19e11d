"""Agent cards for the UI: fetched raw, as served (checked by `accord.codecs.card_schemas`)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from accord.client.card_resolver import CardTooLarge, card_urls, get_card_body
from accord.web.guarded_transport import FetchRefused

Json = dict[str, Any]

CARD_MEMBERS = ("url", "supportedInterfaces", "protocolVersion", "capabilities", "skills",
                "defaultInputModes", "defaultOutputModes")  # fmt: skip


class CardUnavailable(Exception):
    """No card could be read at a URL; the message says why, for a person."""


async def fetch_raw_card(http: httpx.AsyncClient, url: str) -> tuple[str, Json]:
    """The card's URL and JSON object at `url` (a base URL or a card's URL)."""
    if not url.startswith(("http://", "https://")):
        raise CardUnavailable(
            f"{url!r} is not a web address: it must start with http:// or https://"
        )
    tried: list[str] = []
    for candidate in card_urls(url):
        try:
            status, body = await get_card_body(http, candidate, {"Accept": "application/json"})
        except CardTooLarge as exc:
            raise CardUnavailable(str(exc)) from None
        except FetchRefused as exc:
            raise CardUnavailable(f"the UI does not fetch {url}: {exc}") from None
        except httpx.InvalidURL as exc:
            raise CardUnavailable(f"{url!r} is not a valid web address: {exc}") from None
        except httpx.ConnectError:
            raise CardUnavailable(
                f"nothing answers at {httpx.URL(candidate).netloc.decode()}"
                " (is the agent running, and is the address right?)"
            ) from None
        except httpx.HTTPError as exc:
            raise CardUnavailable(f"GET {candidate} failed: {exc or type(exc).__name__}") from None
        if status == 404:
            tried.append(candidate)
            continue
        if status != 200:
            raise CardUnavailable(f"GET {candidate} answered HTTP {status}, not a card")
        try:
            document = json.loads(body)
        except ValueError:
            raise CardUnavailable(
                f"the answer from {candidate} is not JSON, so it is no agent card"
            ) from None
        if not isinstance(document, dict):
            raise CardUnavailable(
                f"the answer from {candidate} is JSON but not an object, so it is no agent card"
            )
        if not looks_like_card(document):
            raise CardUnavailable(
                f"the answer from {candidate} is JSON but no agent card (it names no agent"
                " and none of a card's members), so it is not shown"
            )
        return candidate, document
    raise CardUnavailable(f"no agent card there: {' and '.join(tried)} answered HTTP 404")


def looks_like_card(document: Json) -> bool:
    """Whether a JSON object is meant as an agent card (valid or not): a `name` beside one of
    the members only cards have. Other JSON (an internal service's answer) is never shown."""
    return "name" in document and any(key in document for key in CARD_MEMBERS)
