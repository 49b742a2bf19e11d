"""The multi-agent host fed by a registry search: the agents found beside its own list, asked
again after a while, and a request delegated to one of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord import Client
from accord.client import RegistryClient
from accord.host import AgentRegistry, host_agent
from accord.host.discovered import DiscoveredAgents
from accord.registry import Registry, create_registry_app, open_catalog
from accord.samples import currency, echo, movies
from accord.types import TaskState
from agents_for_tests import SAFETY_TIMEOUT
from live_server import serve_app
from registry_cards import CURATOR, security
from sample_servers import follow, statuses


async def test_the_host_delegates_to_agents_a_registry_search_finds(tmp_path: Path) -> None:
    catalog = open_catalog(f"sqlite:///{tmp_path / 'registry.db'}")
    registry_app = create_registry_app(Registry(catalog), security=security(), checks=False)
    with (
        serve_app(registry_app) as registry_url,
        serve_app(currency.agent.app()) as money,
        serve_app(movies.agent.app()) as films,
        serve_app(echo.agent.app()) as words,
    ):
        async with RegistryClient(registry_url, headers=CURATOR) as registry:
            for url in (money, films):
                await registry.add(url)
        search = DiscoveredAgents(f"{registry_url}?q=convert+currencies+movies")
        agents = AgentRegistry(tmp_path / "agents.json", [words], discovered=search)

        known = [agent.name for agent in await agents.agents()]
        assert known == ["Echo", "Currency", "Movies"]  # its own first, then the search's

        with serve_app(host_agent(agents).app()) as host_url:
            async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
                events = await follow(client, "Who directed Alien?")
    state, answer = statuses(events)[-1]
    assert state is TaskState.COMPLETED and "Ridley Scott" in answer


async def test_the_agents_found_last_stay_while_the_registry_is_away(tmp_path: Path) -> None:
    catalog = open_catalog(f"sqlite:///{tmp_path / 'registry.db'}")
    app = create_registry_app(Registry(catalog), security=security(), checks=False)
    with serve_app(currency.agent.app()) as money:
        with serve_app(app) as registry_url:
            async with RegistryClient(registry_url, headers=CURATOR) as registry:
                await registry.add(money)
            search = DiscoveredAgents(f"{registry_url}?tag=currency", refresh=0.0)
            assert [card.name for _, card in await search.agents()] == ["Currency"]
        assert [card.name for _, card in await search.agents()] == ["Currency"]


@pytest.mark.parametrize("search", ["registry.example", "ftp://x", ""])
def test_a_search_that_is_no_url_is_refused(search: str) -> None:
    with pytest.raises(ValueError, match="not a registry's"):
        DiscoveredAgents(search)
