"""The host's agent registry over HTTP (/host/agents): add, list, remove, errors, persistence."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from accord import Client, create_app
from accord.host import AgentRegistry, host_agent
from accord.host.registry import initial_urls, registry_path
from accord.samples import currency, image
from accord.types import TaskState
from agents_for_tests import CURATOR, HOST_TOKEN, SAFETY_TIMEOUT
from live_server import serve_app
from rpc import served
from sample_servers import closed_port_url, finished

AGENTS = "/host/agents"


def not_a_card_server(document: object) -> Starlette:
    """Answers the well-known card path with `document`, JSON that is no agent card."""

    async def card(_: object) -> JSONResponse:
        return JSONResponse(document)

    return Starlette(routes=[Route("/.well-known/agent-card.json", card)])


def html_server() -> Starlette:
    async def page(_: object) -> PlainTextResponse:
        return PlainTextResponse("<html>hello</html>", media_type="text/html")

    return Starlette(routes=[Route("/.well-known/agent-card.json", page)])


async def test_add_list_and_remove_agents_over_http(tmp_path: Path) -> None:
    registry_file = tmp_path / "agents.json"
    with (
        served(create_app(currency.agent)) as currency_url,
        served(create_app(host_agent(registry_file, agents=[], token=HOST_TOKEN))) as host_url,
    ):
        async with httpx.AsyncClient(
            base_url=host_url, timeout=SAFETY_TIMEOUT, headers=CURATOR
        ) as http:
            assert (await http.get(AGENTS)).json() == []

            added = await http.post(AGENTS, json={"url": currency_url + "/"})
            assert added.status_code == 201, added.text
            entry = added.json()
            assert entry["url"] == currency_url  # the trailing slash dropped
            assert entry["name"] == "Currency"
            assert entry["description"] == currency.agent.card("").description
            assert [s["id"] for s in entry["skills"]] == ["convert_currency"]
            assert entry["skills"][0]["examples"]
            assert entry["card"]["name"] == "Currency" and entry["card"]["url"]

            assert (await http.get(AGENTS)).json() == [entry]
            again = await http.post(AGENTS, json={"url": currency_url})
            assert again.status_code == 201 and (await http.get(AGENTS)).json() == [entry]

            removed = await http.delete(AGENTS, params={"url": currency_url})
            assert removed.status_code == 204 and removed.content == b""
            assert (await http.get(AGENTS)).json() == []
            gone = await http.delete(AGENTS, params={"url": currency_url})
            assert gone.status_code == 204


async def test_bad_urls_and_invalid_cards_get_400_saying_what_is_wrong(tmp_path: Path) -> None:
    dead = closed_port_url()
    with (
        served(
            create_app(host_agent(tmp_path / "agents.json", agents=[], token=HOST_TOKEN))
        ) as host_url,
        serve_app(not_a_card_server({"name": "Half a card", "skills": "none"})) as not_a_card,
        serve_app(html_server()) as html,
    ):
        async with httpx.AsyncClient(
            base_url=host_url, timeout=SAFETY_TIMEOUT, headers=CURATOR
        ) as http:

            async def error(**request: object) -> str:
                response = await http.post(AGENTS, **request)  # type: ignore[arg-type]
                assert response.status_code == 400, response.text
                message: str = response.json()["error"]
                return message

            assert (await error(json={"url": dead})).startswith(f"{dead}: cannot connect to ")
            invalid = await error(json={"url": not_a_card})
            assert invalid.startswith(f"{not_a_card}: the agent card at {not_a_card}/.well")
            assert "is not valid" in invalid
            assert "is not JSON" in await error(json={"url": html})
            assert "not an http:// or https:// URL" in await error(json={"url": "ftp://x/y"})
            assert "not an http:// or https:// URL" in await error(json={"url": "localhost"})
            assert "as a string" in await error(json={"url": 42})
            assert "JSON object" in await error(json=["http://x"])
            json_type = {"content-type": "application/json"}
            assert "JSON body" in await error(content=b"{nope", headers=json_type)
            missing = await http.delete(AGENTS)
            assert missing.status_code == 400 and "?url=" in missing.json()["error"]
            assert (await http.get(AGENTS)).json() == []


@pytest.mark.parametrize(
    "document",
    [
        {"name": "x", "skills": "none"},
        {"name": "x", "skills": ["a"]},
        {"name": "x", "securitySchemes": [1]},
        {"name": "x", "securityRequirements": 3},
        {"name": "x", "supportedInterfaces": [1]},
        [1],
    ],
)
async def test_a_card_of_the_wrong_shapes_is_invalid_in_words(
    tmp_path: Path, document: object
) -> None:
    with (
        served(
            create_app(host_agent(tmp_path / "agents.json", agents=[], token=HOST_TOKEN))
        ) as host_url,
        serve_app(not_a_card_server(document)) as card_url,
    ):
        async with httpx.AsyncClient(
            base_url=host_url, timeout=SAFETY_TIMEOUT, headers=CURATOR
        ) as http:
            response = await http.post(AGENTS, json={"url": card_url})
    assert response.status_code == 400, response.text
    assert (
        f"the agent card at {card_url}/.well-known/agent-card.json is not valid: "
        in (response.json()["error"])
    )


async def test_agents_persist_across_a_restart_of_the_host(tmp_path: Path) -> None:
    registry_file = tmp_path / "host" / "agents.json"
    with (
        served(create_app(currency.agent)) as currency_url,
        served(create_app(image.agent)) as image_url,
    ):
        with served(create_app(host_agent(registry_file, agents=[], token=HOST_TOKEN))) as host_url:
            async with httpx.AsyncClient(
                base_url=host_url, timeout=SAFETY_TIMEOUT, headers=CURATOR
            ) as http:
                for url in (currency_url, image_url):
                    assert (await http.post(AGENTS, json={"url": url})).status_code == 201
        saved = json.loads(registry_file.read_text())
        assert [entry["url"] for entry in saved["agents"]] == [currency_url, image_url]

        with served(create_app(host_agent(registry_file, agents=[], token=HOST_TOKEN))) as host_url:
            async with httpx.AsyncClient(
                base_url=host_url, timeout=SAFETY_TIMEOUT, headers=CURATOR
            ) as http:
                listed = (await http.get(AGENTS)).json()
            assert [entry["name"] for entry in listed] == ["Currency", "Image"]
            async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
                task = finished(await client.send("How much is 20 CHF in JPY?"))
            assert task.status.message is not None
            assert task.status.message.text.startswith("Currency: 20.00 CHF = ")


async def test_start_up_agents_are_added_once_reachable_and_kept(tmp_path: Path) -> None:
    registry_file = tmp_path / "agents.json"
    with served(create_app(currency.agent)) as currency_url:
        dead = closed_port_url()
        registry = AgentRegistry(registry_file, [currency_url, dead, "not a url"])
        assert [a.name for a in await registry.agents()] == ["Currency"]
        assert [a.url for a in await AgentRegistry(registry_file).agents()] == [currency_url]


async def test_a_start_up_agent_not_up_yet_is_tried_again_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("accord.host.registry.RETRY_SECONDS", 0.0)
    card = currency.agent.card("http://127.0.0.1:1/").model_dump(by_alias=True, mode="json")
    up = False

    async def late_card(_: object) -> JSONResponse:
        return JSONResponse(card) if up else JSONResponse({"error": "starting"}, 503)

    with serve_app(Starlette(routes=[Route("/.well-known/agent-card.json", late_card)])) as url:
        registry = AgentRegistry(tmp_path / "agents.json", [url])
        assert await registry.agents() == []
        up = True
        assert [a.name for a in await registry.agents()] == ["Currency"]


async def test_a_file_written_by_another_process_is_read_again(tmp_path: Path) -> None:
    registry_file = tmp_path / "agents.json"
    with served(create_app(currency.agent)) as currency_url:
        reader = AgentRegistry(registry_file)
        assert await reader.agents() == []
        await AgentRegistry(registry_file).add(currency_url)
        assert [a.name for a in await reader.agents()] == ["Currency"]


async def test_an_unreadable_registry_file_means_no_agents_not_a_crash(tmp_path: Path) -> None:
    registry_file = tmp_path / "agents.json"
    registry_file.write_text("{not json")
    with served(create_app(host_agent(registry_file, agents=[], token=HOST_TOKEN))) as host_url:
        async with httpx.AsyncClient(
            base_url=host_url, timeout=SAFETY_TIMEOUT, headers=CURATOR
        ) as http:
            assert (await http.get(AGENTS)).json() == []
        async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
            finished(await client.send("convert 5 USD to EUR"), TaskState.REJECTED)


def test_the_environment_names_the_file_and_the_start_up_agents(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ACCORD_HOST_REGISTRY", raising=False)
    assert registry_path() == Path(".accord/host/agents.json")
    monkeypatch.setenv("ACCORD_HOST_REGISTRY", "/tmp/elsewhere.json")
    assert registry_path() == Path("/tmp/elsewhere.json")
    monkeypatch.setenv("ACCORD_HOST_AGENTS", " http://a:1 ,http://b:2/.well-known/agent-card.json,")
    assert initial_urls() == ["http://a:1", "http://b:2/.well-known/agent-card.json"]
