"""The agent card endpoint: well-known paths, the card's content, ETag and conditional GET."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

import httpx
import pytest

from accord import Agent, create_app
from accord.samples import echo
from accord.types import AgentCard, AgentSkill
from rpc import served

PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"]
SchemaErrors = Callable[[str, Any], list[str]]  # the `schema_errors` fixture of conftest.py
SKILL = AgentSkill(id="echo", name="Echo", description="Repeats you.", tags=["test"])


def make_agent(name: str = "Card test agent") -> Agent:
    return Agent(
        echo.agent.executor,
        name=name,
        description="An agent whose card is under test.",
        version="2.1.0",
        skills=[SKILL],
        output_modes=["text/plain", "application/json"],
    )


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with served(create_app(make_agent())) as url:
        yield url


@pytest.fixture
async def http(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base_url) as client:
        yield client


@pytest.mark.parametrize("path", PATHS)
async def test_card_is_served_at_the_well_known_path(http: httpx.AsyncClient, path: str) -> None:
    response = await http.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    card = AgentCard.model_validate(response.json())
    assert card.name == "Card test agent"
    assert card.version == "2.1.0"
    assert [s.id for s in card.skills] == ["echo"]
    assert card.default_output_modes == ["text/plain", "application/json"]


async def test_both_paths_serve_the_same_card(http: httpx.AsyncClient) -> None:
    first, second = [await http.get(path) for path in PATHS]
    assert first.content == second.content
    assert first.headers["etag"] == second.headers["etag"]


async def test_card_describes_the_jsonrpc_endpoint_of_this_server(
    http: httpx.AsyncClient, base_url: str
) -> None:
    card = (await http.get(PATHS[0])).json()
    assert card["url"] == base_url + "/"
    assert card["preferredTransport"] == "JSONRPC"
    assert card["protocolVersion"] == "0.3.0"
    assert card["capabilities"]["streaming"] is True
    assert card["capabilities"].get("pushNotifications") is not True
    assert "supportsAuthenticatedExtendedCard" not in card


async def test_http_json_interfaces_are_listed_without_a_trailing_slash(
    http: httpx.AsyncClient, base_url: str
) -> None:
    card = (await http.get(PATHS[0])).json()
    rest = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "HTTP+JSON"]
    assert {i["protocolVersion"]: i["url"] for i in rest} == {"1.0": base_url, "0.3": base_url}
    legacy = [i["url"] for i in card["additionalInterfaces"] if i["transport"] == "HTTP+JSON"]
    assert legacy == [base_url]


@pytest.mark.parametrize(
    "path",
    ["/message:send", "//message:send", "//v1/message:send", "/v1//message:send"],
)
async def test_a_route_is_found_with_or_without_doubled_slashes(
    http: httpx.AsyncClient, base_url: str, path: str
) -> None:
    version = "0.3" if "v1" in path else "1.0"
    content = [{"text": "hi"}]
    message = {"messageId": "m-1", "role": "ROLE_USER"}
    message["content" if version == "0.3" else "parts"] = content  # type: ignore[assignment]
    url = httpx.URL(base_url + path)  # not joined to the client's base URL: `//` stays
    response = await http.post(url, json={"message": message}, headers={"A2A-Version": version})
    assert response.status_code == 200, response.text
    assert response.headers["a2a-version"] == version


async def test_card_uses_the_allowed_host_the_client_came_in_on() -> None:
    app = create_app(make_agent(), allowed_hosts=["127.0.0.1", ".example.com:8443"])
    with served(app) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            response = await http.get(PATHS[0], headers={"Host": "agents.example.com:8443"})
            plain = await http.get(PATHS[0])
            refused = await http.get(PATHS[0], headers={"Host": "agents.example.com:8444"})
    assert response.json()["url"] == "http://agents.example.com:8443/"
    assert plain.headers["etag"] != response.headers["etag"]
    assert refused.status_code == 400 and "--allowed-host" in refused.text


async def test_by_default_only_loopback_names_are_answered(http: httpx.AsyncClient) -> None:
    local = await http.get(PATHS[0], headers={"Host": "localhost:1234"})
    assert local.json()["url"] == "http://localhost:1234/"
    forged = await http.get(PATHS[0], headers={"Host": "agents.example.com:8443"})
    assert forged.status_code == 400


async def test_configured_public_url_wins() -> None:
    app = create_app(make_agent(), public_url="https://agents.example.com/a2a")
    with served(app) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            card = (await http.get(PATHS[0])).json()
    assert card["url"] == "https://agents.example.com/a2a"


async def test_card_matches_the_official_schema(
    http: httpx.AsyncClient, schema_errors: SchemaErrors
) -> None:
    assert schema_errors("AgentCard", (await http.get(PATHS[0])).json()) == []


async def test_card_has_a_strong_etag_and_cache_control(http: httpx.AsyncClient) -> None:
    response = await http.get(PATHS[0])
    etag = response.headers["etag"]
    assert etag.startswith('"') and etag.endswith('"') and len(etag) > 2
    assert "max-age=" in response.headers["cache-control"]
    assert (await http.get(PATHS[0])).headers["etag"] == etag, "the ETag is stable"


async def etag_of(http: httpx.AsyncClient) -> str:
    etag: str = (await http.get(PATHS[0])).headers["etag"]
    return etag


@pytest.mark.parametrize(
    "if_none_match",
    [
        "{etag}",
        "*",
        "W/{etag}",
        '"something-else", {etag}',
        '{etag},"something-else"',
        '"a" ,  W/{etag}',
    ],
)
@pytest.mark.parametrize("path", PATHS)
async def test_matching_if_none_match_is_304(
    http: httpx.AsyncClient, if_none_match: str, path: str
) -> None:
    etag = await etag_of(http)
    response = await http.get(path, headers={"If-None-Match": if_none_match.format(etag=etag)})
    assert response.status_code == 304
    assert response.content == b""
    assert response.headers["etag"] == etag
    assert "max-age=" in response.headers["cache-control"]


@pytest.mark.parametrize(
    "if_none_match",
    ['"stale"', 'W/"stale"', '"a", "b"', "", "{bare}", '"{bare}-suffix"'],
)
async def test_other_if_none_match_gets_the_card(
    http: httpx.AsyncClient, if_none_match: str
) -> None:
    etag = await etag_of(http)
    header = if_none_match.format(bare=etag.strip('"'))
    response = await http.get(PATHS[0], headers={"If-None-Match": header})
    assert response.status_code == 200
    assert response.headers["etag"] == etag
    assert AgentCard.model_validate(response.json()).name == "Card test agent"


async def test_card_has_a_last_modified_date_no_later_than_now(http: httpx.AsyncClient) -> None:
    response = await http.get(PATHS[0])
    modified = parsedate_to_datetime(response.headers["last-modified"])
    assert modified.tzinfo is not None and modified <= datetime.now(UTC)
    assert response.headers["last-modified"].endswith(" GMT")


@pytest.mark.parametrize("path", PATHS)
async def test_if_modified_since_the_last_modification_is_304(
    http: httpx.AsyncClient, path: str
) -> None:
    last_modified = (await http.get(path)).headers["last-modified"]
    later = format_datetime(datetime.now(UTC) + timedelta(minutes=5), usegmt=True)
    for since in (last_modified, later):
        response = await http.get(path, headers={"If-Modified-Since": since})
        assert response.status_code == 304
        assert response.content == b""
        assert response.headers["last-modified"] == last_modified


@pytest.mark.parametrize("since", ["Mon, 01 Jan 2001 00:00:00 GMT", "not a date", ""])
async def test_an_earlier_or_unreadable_if_modified_since_gets_the_card(
    http: httpx.AsyncClient, since: str
) -> None:
    response = await http.get(PATHS[0], headers={"If-Modified-Since": since})
    assert response.status_code == 200
    assert response.json()["name"] == "Card test agent"


async def test_if_none_match_wins_over_if_modified_since(http: httpx.AsyncClient) -> None:
    last_modified = (await http.get(PATHS[0])).headers["last-modified"]
    headers = {"If-None-Match": '"stale"', "If-Modified-Since": last_modified}
    assert (await http.get(PATHS[0], headers=headers)).status_code == 200


async def test_a_different_card_has_a_different_etag(http: httpx.AsyncClient) -> None:
    etag = await etag_of(http)
    same_host = {"Host": http.base_url.netloc.decode()}  # so both cards carry the same url
    with served(create_app(make_agent("Another agent"))) as url:
        async with httpx.AsyncClient(base_url=url, headers=same_host) as other:
            stale = await other.get(PATHS[0], headers={"If-None-Match": etag})
    assert stale.status_code == 200
    assert stale.json()["name"] == "Another agent"
    assert stale.json()["url"] == str(http.base_url) + "/"
    assert stale.headers["etag"] != etag


async def test_jsonrpc_endpoint_does_not_answer_get(http: httpx.AsyncClient) -> None:
    assert (await http.get("/")).status_code == 405


async def test_a_changed_card_is_served_anew_with_the_time_it_changed() -> None:
    agent = make_agent()
    with served(create_app(agent)) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            before = await http.get(PATHS[0])
            await asyncio.sleep(1.1)  # HTTP dates have whole seconds
            agent.change_card(agent.card("").model_copy(update={"name": "Renamed"}))
            stale = {"If-None-Match": before.headers["etag"]}
            after = await http.get(PATHS[0], headers=stale)
            dated = {"If-Modified-Since": before.headers["last-modified"]}
            since = await http.get(PATHS[0], headers=dated)
            same = await http.get(PATHS[0], headers={"If-None-Match": after.headers["etag"]})
    assert after.status_code == 200 and after.json()["name"] == "Renamed"
    assert after.headers["etag"] != before.headers["etag"]
    assert parsedate_to_datetime(after.headers["last-modified"]) > parsedate_to_datetime(
        before.headers["last-modified"]
    )
    assert since.status_code == 200 and same.status_code == 304
