"""Reading a card: at most MAX_CARD_BYTES, at the well-known path whatever the URL ends with."""

from __future__ import annotations

import pytest

from accord import Client
from accord.client import card_urls
from accord.client.card_resolver import MAX_CARD_BYTES, CardTooLarge
from agents_for_tests import SAFETY_TIMEOUT
from card_servers import huge_card_server
from live_server import serve_app


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
async def test_a_card_larger_than_the_limit_is_refused_unread(declared: bool) -> None:
    app = huge_card_server(declared=declared)
    with serve_app(app) as url:
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            with pytest.raises(CardTooLarge, match="larger than 1 MiB"):
                await client.get_card()
    assert MAX_CARD_BYTES == 1024 * 1024


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://a/", ["http://a/.well-known/agent-card.json", "http://a/.well-known/agent.json"]),
        ("http://a/x#", ["http://a/x/.well-known/agent-card.json", "http://a/x/.well-known/agent.json"]),
        ("http://a/?t=1", ["http://a/.well-known/agent-card.json?t=1", "http://a/.well-known/agent.json?t=1"]),
        ("http://a/.well-known/agent.json#x", ["http://a/.well-known/agent.json"]),
    ],
)  # fmt: skip
def test_a_query_or_fragment_does_not_cancel_the_well_known_path(
    url: str, expected: list[str]
) -> None:
    assert card_urls(url) == expected
