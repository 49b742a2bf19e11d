"""The registry served: its HTTP API and curators, its OpenAPI description, its A2A interface
driven by the official a2a-sdk client, `Client.discover` and `accord registry` against it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers import get_message_text
from a2a.types import Message, Part, Role, SendMessageRequest
from google.protobuf.json_format import MessageToDict
from typer.testing import CliRunner

import accord
from accord.cli.main import app as accord_cli
from accord.cli.registry import curator_security
from accord.client import RegistryClient
from accord.errors import A2AClientError
from accord.keys import KeyStore, StaticKeys
from accord.registry import CURATOR_SCOPE, Registry, create_registry_app, open_catalog
from accord.samples import currency, echo
from accord.types import new_id
from live_server import serve_app
from registry_cards import CURATOR, READER, TOKEN, catalog_url, security
from stores import SQL_BACKENDS


@asynccontextmanager
async def served_registry(backend: str, tmp_path: Path, **options: object) -> AsyncIterator[str]:
    async with catalog_url(backend, tmp_path) as database:
        # opened by the app, in its server's event loop
        registry = Registry(open_catalog(database))
        app = create_registry_app(registry, checks=False, **options)  # type: ignore[arg-type]
        with serve_app(app) as url:
            yield url


@pytest.fixture(name="registry_url", params=SQL_BACKENDS)
async def registry_url_fixture(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[str]:
    async with served_registry(request.param, tmp_path, security=security()) as url:
        yield url


@pytest.fixture(name="agents", scope="module")
def agents_fixture() -> Iterator[tuple[str, str]]:
    """The currency and echo samples, served."""
    with serve_app(currency.agent.app()) as money, serve_app(echo.agent.app()) as words:
        yield money, words


async def test_curators_add_and_remove_others_are_refused(
    registry_url: str, agents: tuple[str, str]
) -> None:
    money, _ = agents
    api = registry_url + "/registry/agents"
    async with httpx.AsyncClient() as http:
        anonymous = await http.post(api, json={"url": money})
        wrong = await http.post(api, json={"url": money}, headers={"Authorization": "Bearer no"})
        reader = await http.post(
            api, json={"url": money}, headers={"Authorization": f"Bearer {READER}"}
        )
        foreign = await http.post(
            api, json={"url": money}, headers={**CURATOR, "Origin": "https://elsewhere.example"}
        )
        assert (await http.get(api)).json()["total"] == 0  # none of those added anything

        added = await http.post(api, json={"url": money}, headers=CURATOR)
        again = await http.post(api, json={"url": money}, headers=CURATOR)
        listed = (await http.get(api, params={"q": "currency"})).json()
        removed = await http.delete(api, params={"url": money}, headers=CURATOR)
        gone = await http.delete(api, params={"url": money}, headers=CURATOR)

    assert anonymous.status_code == 401 and "Bearer" in anonymous.headers["www-authenticate"]
    assert wrong.status_code == 401
    assert (reader.status_code, reader.json()["error"]) == (
        403,
        f"changing the registry needs the scope {CURATOR_SCOPE}",
    )
    assert foreign.status_code == 403
    assert (added.status_code, again.status_code) == (201, 200)
    assert [a["name"] for a in listed["agents"]] == ["Currency"]
    assert removed.status_code == 200 and removed.json()["name"] == "Currency"
    assert gone.status_code == 404


async def test_without_a_security_nobody_changes_the_registry(
    tmp_path: Path, agents: tuple[str, str]
) -> None:
    async with served_registry("sqlite", tmp_path) as url, httpx.AsyncClient() as http:
        refused = await http.post(url + "/registry/agents", json={"url": agents[0]})
    assert refused.status_code == 403
    assert "not changed over HTTP" in refused.json()["error"]


async def test_a_private_registry_answers_searches_to_its_callers_only(tmp_path: Path) -> None:
    async with (
        served_registry("sqlite", tmp_path, security=security(), public_search=False) as url,
        httpx.AsyncClient() as http,
    ):
        anonymous = await http.get(url + "/registry/agents")
        reader = await http.get(
            url + "/registry/agents", headers={"Authorization": f"Bearer {READER}"}
        )
    assert (anonymous.status_code, reader.status_code) == (401, 200)


@pytest.mark.parametrize(
    ("request_", "status", "error"),
    [
        (("POST", "/registry/agents", {"content": b"{", "headers": {
            "Content-Type": "application/json"}}), 400, "send a JSON object"),
        (("POST", "/registry/agents", {"content": b"url=x"}), 400, "send the body as JSON"),
        (("POST", "/registry/agents", {"json": {"url": 7}}), 400, "name the agent's card URL"),
        (("POST", "/registry/agents", {"json": {"url": "ftp://x"}}), 422, "not an http"),
        (("DELETE", "/registry/agents", {}), 400, "name the agent"),
        (("GET", "/registry/agent", {"params": {"url": "http://nowhere.example"}}), 404,
         "no agent is kept"),
        (("GET", "/registry/agents", {"params": {"limit": "-1"}}), 400, "limit is a whole"),
        (("POST", "/registry/refresh", {"json": {"url": "http://x.example"}}), 404,
         "no agent is kept"),
    ],
)  # fmt: skip
async def test_bad_requests_get_a_reason_and_no_500(
    registry_url: str, request_: tuple[str, str, dict[str, object]], status: int, error: str
) -> None:
    method, path, given = request_
    options = dict(given)
    headers = {**CURATOR, **options.pop("headers", {})}  # type: ignore[dict-item]
    async with httpx.AsyncClient() as http:
        answer = await http.request(method, registry_url + path, headers=headers, **options)  # type: ignore[arg-type]
    assert answer.status_code == status
    assert error in answer.json()["error"]


async def test_a_refused_card_comes_back_with_its_reasons(registry_url: str) -> None:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def card(request: object) -> JSONResponse:
        return JSONResponse({"name": "Nameless", "url": "http://x/"})

    broken = Starlette(routes=[Route("/.well-known/agent-card.json", card)])
    with serve_app(broken) as url, pytest.raises(A2AClientError) as refused:
        async with RegistryClient(registry_url, headers=CURATOR) as registry:
            await registry.add(url)
    assert refused.value.status_code == 422
    assert "- A2A 0.3.0: `description` is missing; the specification requires it" in str(
        refused.value
    )


async def test_the_openapi_description_covers_the_api(registry_url: str) -> None:
    async with httpx.AsyncClient() as http:
        document = (await http.get(registry_url + "/registry/openapi.json")).json()

    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) == {"/registry/agents", "/registry/agent", "/registry/refresh"}
    parameters = [p["name"] for p in document["paths"]["/registry/agents"]["get"]["parameters"]]
    assert {"q", "tag", "skill", "binding", "scheme", "limit", "offset"} <= set(parameters)
    refs = [m for m in json.dumps(document).split('"') if m.startswith("#/components/schemas/")]
    assert {r.rsplit("/", 1)[1] for r in refs} <= set(document["components"]["schemas"])


async def test_the_official_client_asks_and_gets_cards_as_data_parts(
    registry_url: str, agents: tuple[str, str]
) -> None:
    async with RegistryClient(registry_url, headers=CURATOR) as registry:
        for url in agents:
            await registry.add(url)
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, registry_url).get_agent_card()
    client = await create_client(card, ClientConfig(streaming=False))
    try:
        message = Message(
            message_id=new_id(),
            role=Role.ROLE_USER,
            parts=[Part(text="an agent that converts currencies")],
        )
        [answer] = [e async for e in client.send_message(SendMessageRequest(message=message))]
    finally:
        await client.close()

    reply = answer.message
    assert reply.role == Role.ROLE_AGENT
    assert "Currency" in get_message_text(reply)
    data = [MessageToDict(part.data) for part in reply.parts if part.HasField("data")]
    assert [d["name"] for d in data] == ["Currency"]
    assert data[0]["skills"][0]["id"] == "convert_currency"


async def test_discover_returns_cards_filtered_and_verified(registry_url: str) -> None:
    keys = KeyStore.ephemeral()
    with serve_app(currency.agent.app(keys=keys)) as signed, serve_app(echo.agent.app()) as plain:
        async with RegistryClient(registry_url, headers=CURATOR) as registry:
            await registry.add(signed)
            await registry.add(plain)

        everyone = await accord.Client.discover(registry_url)
        tagged = await accord.Client.discover(registry_url, "", tag="currency")
        trusted = await accord.Client.discover(registry_url, trusted_keys=StaticKeys(keys.jwks()))
        [found] = await accord.Client.discover(registry_url, "convert 100 USD to EUR")
        async with accord.Client(found.url, card=found) as client:
            reply = await client.send("100 USD to EUR")

    assert sorted(card.name for card in everyone) == ["Currency", "Echo"]
    assert [card.name for card in tagged] == ["Currency"]
    assert [card.name for card in trusted] == ["Currency"]
    assert found.name == "Currency" and reply is not None


@contextmanager
def cli_registry(tmp_path: Path) -> Iterator[str]:
    catalog = open_catalog(f"sqlite:///{tmp_path / 'cli.db'}")
    app = create_registry_app(Registry(catalog), security=curator_security(TOKEN), checks=False)
    with serve_app(app) as url:
        yield url


def test_the_cli_adds_searches_shows_and_removes(tmp_path: Path, agents: tuple[str, str]) -> None:
    money, _ = agents
    runner = CliRunner()
    with cli_registry(tmp_path) as url:
        where = ["--registry", url]
        refused = runner.invoke(accord_cli, ["registry", "add", money, *where])
        added = runner.invoke(accord_cli, ["registry", "add", money, *where, "--token", TOKEN])
        found = runner.invoke(accord_cli, ["registry", "search", "exchange rates", *where])
        filtered = runner.invoke(
            accord_cli, ["registry", "search", "", "-f", "tag=nothing", *where]
        )
        shown = runner.invoke(accord_cli, ["registry", "show", money, *where])
        removed = runner.invoke(accord_cli, ["registry", "remove", money, *where, "--token", TOKEN])
        bad = runner.invoke(accord_cli, ["registry", "search", "x", "-f", "colour", *where])

    assert refused.exit_code == 1 and "requires authentication" in refused.stderr
    assert added.exit_code == 0 and added.stdout.startswith("added Currency:")
    assert found.stdout.splitlines()[0].startswith("Currency  ")
    assert found.stdout.splitlines()[-1] == "1 of 1 agent(s)"
    assert filtered.stdout == "0 of 0 agent(s)\n"
    assert "status up, revision 1" in shown.stdout and " added " in shown.stdout
    assert removed.exit_code == 0 and removed.stdout.startswith("removed Currency:")
    assert bad.exit_code == 2 and "FACET=VALUE" in bad.stderr


async def test_a_data_part_asks_with_filters_and_a_bad_one_gets_invalid_params(
    registry_url: str, agents: tuple[str, str]
) -> None:
    from accord.errors import InvalidParams
    from accord.types import DataPart, Message, Role

    async with RegistryClient(registry_url, headers=CURATOR) as registry:
        for url in agents:
            await registry.add(url)
    asking = Message(
        message_id=new_id(), role=Role.USER, parts=[DataPart(data={"tag": "currency"})]
    )
    wrong = Message(message_id=new_id(), role=Role.USER, parts=[DataPart(data={"colour": 1})])
    async with accord.Client(registry_url) as client:
        reply = await client.send(asking)
        with pytest.raises(InvalidParams, match="unknown parameter 'colour'"):
            await client.send(wrong)

    cards = [part.data for part in reply.parts if isinstance(part, DataPart)]  # type: ignore[union-attr]
    assert [card["name"] for card in cards] == ["Currency"]
