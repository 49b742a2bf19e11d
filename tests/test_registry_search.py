"""The registry's search on SQLite (FTS5) and PostgreSQL (text search): ranking 50 cards,
filters, paging, and any text a client sends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accord.registry import CardCatalog, SearchError, SearchQuery
from accord.registry.http_api import search_query
from registry_cards import RANKING, catalog_on, fifty_cards, keep_cards
from stores import SQL_BACKENDS


@pytest.fixture(name="catalog", params=SQL_BACKENDS)
async def fifty(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[CardCatalog]:
    async with catalog_on(request.param, tmp_path) as catalog:
        await keep_cards(catalog, fifty_cards())
        yield catalog


async def names(catalog: CardCatalog, text: str = "", **options: Any) -> list[str]:
    page = await catalog.search(SearchQuery(text, **options))
    return [str(agent.document["name"]) for agent in page.agents]


async def test_ten_queries_find_the_expected_agent_first(catalog: CardCatalog) -> None:
    found = {query: (await names(catalog, query))[:1] for query in RANKING}

    assert found == {query: [name] for query, name in RANKING.items()}


async def test_more_matching_words_rank_higher(catalog: CardCatalog) -> None:
    ranked = await names(catalog, "book a hotel room")

    assert ranked[0] == "Hotel Booker"
    assert "Flight Booker" in ranked[1:]  # books too, but no hotel


async def test_ranks_are_reported_best_first(catalog: CardCatalog) -> None:
    page = await catalog.search(SearchQuery("travel"))

    ranks = [agent.rank for agent in page.agents]
    assert len(ranks) >= 3 and all(rank is not None for rank in ranks)
    assert ranks == sorted(ranks, reverse=True)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"tag": ["travel"]}, {"Flight Booker", "Hotel Booker", "Travel Planner", "Car Rental"}),
        ({"tag": ["travel"], "scheme": ["oauth2"]}, {"Flight Booker", "Hotel Booker"}),
        ({"binding": ["grpc"]}, {"Code Reviewer", "Test Writer", "Security Scanner"}),
        ({"provider": ["acme finance"]}, {"Currency Converter", "Stock Quotes"}),
        ({"skill": ["Book a flight"]}, {"Flight Booker"}),
        ({"scheme": ["bearer"], "tag": ["finance"]}, {"Expense Reimbursement", "Payroll",
                                                      "Tax Helper"}),
        ({"scheme": ["mutualtls"]}, {"Password Vault"}),
        ({"output_mode": ["image/png"]}, set()),
    ],
)  # fmt: skip
async def test_filters_narrow_the_agents(
    catalog: CardCatalog, filters: dict[str, list[str]], expected: set[str]
) -> None:
    assert set(await names(catalog, filters=filters, limit=100)) == expected


async def test_text_and_filters_together(catalog: CardCatalog) -> None:
    found = await names(catalog, "finance", filters={"scheme": ["none"]})

    assert set(found) == {"Currency Converter", "Mortgage Calculator"}


async def test_pages_cover_every_agent_once(catalog: CardCatalog) -> None:
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = await catalog.search(SearchQuery(limit=7, offset=offset))
        assert page.total == 50
        seen += [agent.url for agent in page.agents]
        offset = page.next_offset
    assert len(seen) == len(set(seen)) == 50


async def test_only_stop_words_find_nothing(catalog: CardCatalog) -> None:
    page = await catalog.search(SearchQuery("an agent that can"))

    assert (page.agents, page.total) == ([], 0)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=60))
async def test_any_text_is_searched_without_error(catalog: CardCatalog, text: str) -> None:
    page = await catalog.search(SearchQuery(text))

    assert page.total >= len(page.agents)


@given(items=st.lists(st.tuples(st.text(max_size=12), st.text(max_size=12)), max_size=5))
def test_any_query_parameters_are_read_or_refused_with_a_reason(
    items: list[tuple[str, str]],
) -> None:
    try:
        query = search_query(items)
    except SearchError as exc:
        assert str(exc)
    else:
        assert 1 <= query.limit <= 100


@pytest.mark.parametrize(
    ("items", "reason"),
    [
        ([("colour", "red")], "unknown parameter 'colour'"),
        ([("limit", "lots")], "limit is a whole number"),
        ([("limit", "0")], "limit is from 1 to 100"),
        ([("status", "sleeping")], "status is one of up, down, any"),
    ],
)
def test_bad_query_parameters_say_what_is_wrong(items: list[tuple[str, str]], reason: str) -> None:
    with pytest.raises(SearchError, match=reason):
        search_query(items)
