"""The registry's cards on SQLite and PostgreSQL: a real sample added, changed and picked up on
a check (a 304 writes nothing), an agent going down and coming back, invalid cards refused
with the schema's reasons, signatures checked with trusted keys."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from accord.keys import KeyStore, StaticKeys
from accord.registry import CardRejected, CardUnreachable, Registry, SearchQuery
from accord.registry.service import CAME_UP, CHANGED, STILL_DOWN, UNCHANGED, WENT_DOWN
from accord.samples import currency
from live_server import serve_app
from registry_cards import Swappable, port_of, registry_fixture, with_a_skill  # noqa: F401

CARD_PATH = "/.well-known/agent-card.json"


class Counting(httpx.AsyncBaseTransport):
    """The registry's HTTP transport, counting the answers by status."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.statuses: list[int] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        self.statuses.append(response.status_code)
        return response


async def test_a_sample_is_added_and_its_changed_card_picked_up(registry: Registry) -> None:
    seen = Counting()
    agent = Swappable(currency.agent.app())
    async with httpx.AsyncClient(transport=seen) as http:
        registry._http = http  # the registry's fetches, seen
        await a_changed_card_is_picked_up(registry, agent, seen)


async def a_changed_card_is_picked_up(registry: Registry, agent: Swappable, seen: Counting) -> None:
    with serve_app(agent) as url:
        added = await registry.add(url)
        assert (added.url, added.revision, added.status) == (url + CARD_PATH, 1, "up")
        assert "convert_currency" in [s["id"] for s in added.document["skills"]]

        assert await registry.refresh(added.url) == UNCHANGED
        assert seen.statuses[-1] == 304
        unchanged = await registry.catalog.get(added.url)
        assert unchanged == added  # nothing rewritten: not even the time of the check
        assert [c.event for c in await registry.catalog.history(added.url)] == ["added"]

        agent.current = with_a_skill(currency.agent).app()
        assert await registry.refresh(added.url) == CHANGED

    changed, history = await registry.show(added.url)
    assert changed.revision == 2 and changed.etag != added.etag
    assert [(c.event, c.revision) for c in history] == [("changed", 2), ("added", 1)]
    assert history[0].detail == "added skill(s) historic_rates"
    assert history[0].document == changed.document and history[1].document == added.document
    found = await registry.search(SearchQuery("yesterday's historic rate"))
    assert [a.url for a in found.agents] == [added.url]


async def test_an_agent_added_twice_at_once_is_kept_once(registry: Registry) -> None:
    with serve_app(currency.agent.app()) as url:
        first, second = await asyncio.gather(registry.add(url), registry.add(url + CARD_PATH))

    assert first.url == second.url
    assert (await registry.search(SearchQuery())).total == 1
    assert [c.event for c in await registry.catalog.history(first.url)] == ["added"]


async def test_an_agent_going_down_and_coming_back(registry: Registry) -> None:
    app = currency.agent.app()
    with serve_app(app) as url:
        added = await registry.add(url + CARD_PATH)
    port = port_of(url)

    assert await registry.refresh(added.url) == WENT_DOWN
    assert await registry.refresh(added.url) == STILL_DOWN
    down = await registry.catalog.get(added.url)
    assert down is not None and (down.status, down.failures) == ("down", 2)
    assert (await registry.search(SearchQuery("currency"))).agents == []
    assert len((await registry.search(SearchQuery("currency", status="down"))).agents) == 1

    with serve_app(app, port=port):
        assert await registry.refresh(added.url) == CAME_UP
    back, history = await registry.show(added.url)
    assert (back.status, back.failures, back.revision) == ("up", 0, 1)
    assert [c.event for c in history] == ["up", "down", "added"]
    assert "cannot connect" in history[1].detail or "failed" in history[1].detail
    assert len((await registry.search(SearchQuery("currency"))).agents) == 1


def card_server(card: object) -> Starlette:
    async def serve_card(request: object) -> JSONResponse:
        return JSONResponse(card)

    return Starlette(routes=[Route(CARD_PATH, serve_card)])


@pytest.mark.parametrize(
    ("card", "reasons"),
    [
        (
            {"name": "Half", "description": "a card", "url": "http://x/", "version": "1"},
            [
                "A2A 0.3.0: `capabilities` is missing; the specification requires it",
                "A2A 0.3.0: `defaultInputModes` is missing; the specification requires it",
            ],
        ),
        (
            {"name": "Typed", "description": "d", "url": "http://x/", "version": "1",
             "capabilities": {}, "defaultInputModes": ["text/plain"],
             "defaultOutputModes": ["text/plain"], "skills": "none"},
            ["A2A 0.3.0: `skills` should be a list, but it is text (\"none\")"],
        ),
    ],
)  # fmt: skip
async def test_invalid_cards_are_refused_with_the_schemas_reasons(
    registry: Registry, card: object, reasons: list[str]
) -> None:
    with serve_app(card_server(card)) as url, pytest.raises(CardRejected) as refused:
        await registry.add(url)

    assert set(reasons) <= set(refused.value.reasons)
    assert (await registry.search(SearchQuery())).total == 0


async def test_what_is_no_card_is_refused(registry: Registry) -> None:
    with serve_app(card_server(["a", "list"])) as url, pytest.raises(CardRejected) as refused:
        await registry.add(url)
    assert refused.value.reasons == ["it is JSON but not an object"]

    with pytest.raises(CardUnreachable, match="HTTP 404"), serve_app(Starlette()) as url:
        await registry.add(url)


async def test_signed_cards_are_taken_and_others_refused(registry: Registry) -> None:
    keys, stranger = KeyStore.ephemeral(), KeyStore.ephemeral()
    registry.trusted_keys = StaticKeys(keys.jwks())
    with serve_app(currency.agent.app(keys=keys)) as signed:
        added = await registry.add(signed)
    assert added.signed_by == keys.active().kid

    with serve_app(currency.agent.app(keys=stranger)) as other, pytest.raises(CardRejected) as no:
        await registry.add(other)
    assert "is not trusted" in no.value.reasons[0]


async def test_a_card_resigned_by_an_untrusted_key_is_refused_on_a_check(
    registry: Registry,
) -> None:
    keys = KeyStore.ephemeral()
    registry.trusted_keys = StaticKeys(keys.jwks())
    agent = Swappable(currency.agent.app(keys=keys))
    with serve_app(agent) as url:
        added = await registry.add(url)
        agent.current = with_a_skill(currency.agent).app(keys=KeyStore.ephemeral())
        assert await registry.refresh(added.url) == "rejected"

    kept, history = await registry.show(added.url)
    assert kept.document == added.document  # the card it had stays
    assert history[0].event == "rejected" and "not trusted" in history[0].detail


@pytest.mark.parametrize(("version", "taken"), [("0.2.5", True), ("0.3.0", False)])
async def test_a_legacy_card_is_taken_with_its_schemas_problems_noted(
    registry: Registry, version: str, taken: bool
) -> None:
    card = {
        "name": "Old", "description": "an agent of before", "url": "http://x/", "version": "1",
        "protocolVersion": version, "capabilities": {"streaming": "yes"},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
    }  # fmt: skip
    problem = f"A2A {version}: `capabilities.streaming` should be true or false, but it is text"
    with serve_app(card_server(card)) as url:
        if not taken:
            with pytest.raises(CardRejected) as refused:
                await registry.add(url)
            assert any(reason.startswith(problem) for reason in refused.value.reasons)
            return
        added = await registry.add(url)
    _, history = await registry.show(added.url)
    assert f"(a legacy card: {problem}" in history[0].detail
