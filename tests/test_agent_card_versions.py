"""One agent card for every version: the union card, its 0.3 and 1.0 halves, the interfaces it
lists, and the extended card of each version (0.2's HTTP GET, 0.3's and 1.0's calls)."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Iterator
from functools import cache

import httpx
import pytest
from jsonschema import Draft7Validator

from accord import Agent
from accord.codecs import card_v1_0, v0_3
from accord.codecs.card import overlay, union_card
from accord.keys import StaticKeys, verify_card
from accord.samples import echo
from accord.server.interfaces import ServedInterfaces
from accord.types import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
)
from conftest import SchemaErrors
from rpc import Json, served
from rpc_v1_0 import assert_valid_v1, schema_errors_v1
from spec_files import SPEC_DIR, load_schema, read_spec_file

CARD_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"]
EXTENDED_PATH = "/agent/authenticatedExtendedCard"

OAUTH = OAuth2SecurityScheme(
    description="Company SSO",
    flows=OAuthFlows(
        client_credentials=ClientCredentialsOAuthFlow(
            token_url="https://auth.example.com/token", scopes={"tasks": "Run tasks"}
        ),
        authorization_code=AuthorizationCodeOAuthFlow(
            authorization_url="https://auth.example.com/authorize",
            token_url="https://auth.example.com/token",
            scopes={"tasks": "Run tasks"},
        ),
    ),
    oauth2_metadata_url="https://auth.example.com/.well-known/oauth-authorization-server",
)
SKILL = AgentSkill(
    id="audit",
    name="Audit",
    description="Audits expense reports.",
    tags=["finance"],
    examples=["Audit last month's reports"],
    input_modes=["application/json"],
    output_modes=["application/pdf"],
    security=[{"oauth": ["tasks"]}],
)
EXTENDED = AgentCard(
    name="Auditor (members)",
    description="More skills for members.",
    url="",
    version="3.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[SKILL, SKILL.model_copy(update={"id": "audit-deep", "security": None})],
)


def rich_agent(*, extended: bool = True) -> Agent:
    """An agent whose card uses every member the two versions spell differently."""
    return Agent(
        echo.agent.executor,
        name="Auditor",
        description="Audits expense reports.",
        version="3.0.0",
        skills=[SKILL],
        push_notifications=True,
        extensions=[
            AgentExtension(
                uri="https://extensions.example.com/audit/v1", required=True, params={"x": 1}
            )
        ],
        provider=AgentProvider(organization="Example Inc.", url="https://example.com"),
        documentation_url="https://example.com/docs",
        icon_url="https://example.com/icon.png",
        security_schemes={
            "oauth": OAUTH,
            "bearer": HTTPAuthSecurityScheme(scheme="bearer", bearer_format="JWT"),
            "key": APIKeySecurityScheme(name="X-API-Key", in_="header", description="Keys"),
            "oidc": OpenIdConnectSecurityScheme(
                open_id_connect_url="https://auth.example.com/.well-known/openid-configuration"
            ),
            "mtls": MutualTLSSecurityScheme(),
        },
        security=[{"oauth": ["tasks"]}, {"key": [], "mtls": []}],
        enforce_security=False,  # a card under test: its requirements, not their checks
        extended_card=EXTENDED if extended else None,
    )


# What only one version has (spec 0.3 and 1.0, and the generated 1.0 schema).
ONLY_V0_3 = {
    "card": {
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
        "security",
        "supportsAuthenticatedExtendedCard",
    },
    "capabilities": {"stateTransitionHistory"},
    "skill": {"security"},
    "scheme": {
        "type",
        "description",
        "name",
        "in",
        "scheme",
        "bearerFormat",
        "flows",
        "oauth2MetadataUrl",
        "openIdConnectUrl",
    },
}
ONLY_V1_0 = {
    "card": {"supportedInterfaces", "securityRequirements"},
    "capabilities": {"extendedAgentCard"},
    "skill": {"securityRequirements"},
    "scheme": {
        "apiKeySecurityScheme",
        "httpAuthSecurityScheme",
        "oauth2SecurityScheme",
        "openIdConnectSecurityScheme",
        "mtlsSecurityScheme",
    },
}


def without(card: Json, members: dict[str, set[str]]) -> Json:
    """`card` without `members` (ONLY_V0_3 or ONLY_V1_0), wherever they are."""
    card = copy.deepcopy(card)
    places = [
        ("card", [card]),
        ("capabilities", [card["capabilities"]]),
        ("skill", card["skills"]),
        ("scheme", list(card.get("securitySchemes", {}).values())),
    ]
    for place, objects in places:
        for obj in objects:
            for member in members[place]:
                obj.pop(member, None)
    return card


@cache
def _closed_v0_3() -> Draft7Validator:
    """The 0.3 schema's AgentCard with no room for members it does not define."""
    definitions = copy.deepcopy(load_schema()["definitions"])
    for spec in definitions.values():
        if "properties" in spec:
            spec["additionalProperties"] = False
    return Draft7Validator({"$ref": "#/definitions/AgentCard", "definitions": definitions})


@cache
def _v0_2_5() -> Draft7Validator:
    """The 0.2.5 schema's AgentCard (what 0.2 clients of the extended card path read)."""
    schema = json.loads(read_spec_file(SPEC_DIR / "a2a-v0.2.5.json"))
    return Draft7Validator({"$ref": "#/definitions/AgentCard", **schema})


def assert_valid_v0_3(card: Json, schema_errors: SchemaErrors) -> None:
    """A 0.3 AgentCard, with no member 0.3 does not define."""
    assert schema_errors("AgentCard", card) == []
    unknown = [f"{list(e.absolute_path)}: {e.message}" for e in _closed_v0_3().iter_errors(card)]
    assert unknown == []


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with served(rich_agent().app()) as url:
        yield url


@pytest.fixture
async def http(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base_url) as client:
        yield client


async def rpc_result(http: httpx.AsyncClient, method: str, version: str) -> Json:
    response = await http.post(
        "/",
        json={"jsonrpc": "2.0", "id": 1, "method": method},
        headers={"A2A-Version": version},
    )
    result: Json = response.json()["result"]
    return result


# --- the union card --------------------------------------------------------------------------


@pytest.mark.parametrize("path", CARD_PATHS)
async def test_without_its_0_3_members_the_served_card_is_a_1_0_card(
    http: httpx.AsyncClient, path: str
) -> None:
    card = (await http.get(path)).json()
    assert_valid_v1("AgentCard", without(card, ONLY_V0_3))


@pytest.mark.parametrize("path", CARD_PATHS)
async def test_without_its_1_0_members_the_served_card_is_a_0_3_card(
    http: httpx.AsyncClient, path: str, schema_errors: SchemaErrors
) -> None:
    card = (await http.get(path)).json()
    assert_valid_v0_3(without(card, ONLY_V1_0), schema_errors)
    assert schema_errors("AgentCard", card) == [], "0.3 clients read the whole card too"


@pytest.mark.parametrize("path", [*CARD_PATHS, EXTENDED_PATH])
@pytest.mark.parametrize("version", ["1.0", "1.0.1"])
async def test_a_request_naming_1_0_gets_exactly_the_1_0_card(
    http: httpx.AsyncClient, path: str, version: str
) -> None:
    union = await http.get(path)
    response = await http.get(path, headers={"A2A-Version": version})
    assert response.status_code == 200
    card = response.json()
    assert_valid_v1("AgentCard", card)  # the 1.0 schema allows no member it does not define
    assert unsigned(card) == unsigned(without(union.json(), ONLY_V0_3))
    await assert_signed(http, card)  # each shape carries a signature of exactly what it says
    assert response.headers["vary"] == union.headers["vary"] == "A2A-Version"
    assert response.headers["etag"] != union.headers["etag"]
    again = await http.get(
        path, headers={"A2A-Version": version, "If-None-Match": union.headers["etag"]}
    )
    assert again.status_code == 200, "an ETag names one variant"
    cached = await http.get(
        path, headers={"A2A-Version": version, "If-None-Match": response.headers["etag"]}
    )
    assert cached.status_code == 304


@pytest.mark.parametrize(
    "headers", [{}, {"A2A-Version": "0.3"}, {"A2A-Version": "2.0"}, {"A2A-Version": "1"}]
)
async def test_a_request_naming_no_1_x_version_gets_the_union_card(
    http: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    card = (await http.get(CARD_PATHS[0], headers=headers)).json()
    assert {"url", "supportedInterfaces"} <= set(card)


async def test_the_version_may_name_the_card_in_the_query(http: httpx.AsyncClient) -> None:
    card = (await http.get(CARD_PATHS[0], params={"A2A-Version": "1.0"})).json()
    assert_valid_v1("AgentCard", card)


def test_each_half_of_the_union_card_is_that_versions_card() -> None:
    card = ServedInterfaces().card(rich_agent().card(""), "https://agents.example.com/")
    union = union_card(card)
    assert without(union, ONLY_V0_3) == card_v1_0.agent_card(card)
    assert without(union, ONLY_V1_0) == v0_3.agent_card(card)
    # Whole, it is neither: the checks above would see a member of the other version.
    assert schema_errors_v1("AgentCard", union)
    assert list(_closed_v0_3().iter_errors(union))


async def test_the_card_says_the_same_in_both_versions(http: httpx.AsyncClient) -> None:
    card = (await http.get(CARD_PATHS[0])).json()
    assert card["supportsAuthenticatedExtendedCard"] is True
    assert card["capabilities"]["extendedAgentCard"] is True
    assert card["security"] == [{"oauth": ["tasks"]}, {"key": [], "mtls": []}]
    assert card["securityRequirements"] == [
        {"schemes": {"oauth": {"list": ["tasks"]}}},
        {"schemes": {"key": {"list": []}, "mtls": {"list": []}}},
    ]
    assert card["skills"][0]["security"] == [{"oauth": ["tasks"]}]
    assert card["skills"][0]["securityRequirements"] == [
        {"schemes": {"oauth": {"list": ["tasks"]}}}
    ]
    key = card["securitySchemes"]["key"]
    assert key == {
        "type": "apiKey",
        "description": "Keys",
        "name": "X-API-Key",
        "in": "header",
        "apiKeySecurityScheme": {"description": "Keys", "name": "X-API-Key", "location": "header"},
    }
    assert card["securitySchemes"]["mtls"] == {"type": "mutualTLS", "mtlsSecurityScheme": {}}


def test_of_several_oauth_flows_1_0_keeps_the_first_in_the_protos_order() -> None:
    scheme = card_v1_0.security_scheme(OAUTH.to_wire())
    assert list(scheme["oauth2SecurityScheme"]["flows"]) == ["authorizationCode"]
    assert set(OAUTH.to_wire()["flows"]) == {"authorizationCode", "clientCredentials"}


def test_the_two_cards_must_agree_on_what_they_share() -> None:
    assert overlay({"a": [1, {"b": 2}]}, {"a": [1, {"c": 3}], "d": 4}) == {
        "a": [1, {"b": 2, "c": 3}],
        "d": 4,
    }
    with pytest.raises(ValueError, match=r"card\.a\[1\]\.b"):
        overlay({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]})


# --- the interfaces the card lists -----------------------------------------------------------


async def test_the_card_lists_every_binding_and_version_served(
    http: httpx.AsyncClient, base_url: str
) -> None:
    card = (await http.get(CARD_PATHS[0])).json()
    root = base_url + "/"  # HTTP+JSON URLs have no trailing slash: clients append routes
    assert card["supportedInterfaces"] == [
        {"url": root, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": base_url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        {"url": root, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        {"url": base_url, "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
    ]
    assert (card["url"], card["preferredTransport"]) == (root, "JSONRPC")
    assert card["protocolVersion"] == "0.3.0"
    assert card["additionalInterfaces"] == [
        {"url": root, "transport": "JSONRPC"},
        {"url": base_url, "transport": "HTTP+JSON"},
    ]


async def probe(http: httpx.AsyncClient, interface: Json) -> Json:
    """Ask the interface for a task that does not exist, in its binding and version."""
    url, version = interface["url"], interface["protocolVersion"]
    headers = {"A2A-Version": version}
    if interface["protocolBinding"] == "JSONRPC":
        method = "GetTask" if version == "1.0" else "tasks/get"
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": "nope"}}
        response = await http.post(url, json=body, headers=headers)
        assert response.headers["a2a-version"] == version
        error: Json = response.json()["error"]
        return error
    prefix = "/v1" if version == "0.3" else ""  # 0.3's HTTP+JSON paths start with /v1
    response = await http.get(url.rstrip("/") + prefix + "/tasks/nope", headers=headers)
    assert response.status_code == 404
    found: Json = response.json()
    return found


async def test_every_listed_interface_answers_in_its_binding_and_version(
    http: httpx.AsyncClient,
) -> None:
    card = (await http.get(CARD_PATHS[0])).json()
    for interface in card["supportedInterfaces"]:
        answer = await probe(http, interface)
        if interface["protocolBinding"] == "JSONRPC":
            assert answer["code"] == -32001, interface
        else:
            assert answer["error"]["status"] == "NOT_FOUND", interface


async def test_the_interfaces_are_at_the_public_url() -> None:
    with served(rich_agent().app(public_url="https://agents.example.com/a2a")) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            card = (await http.get(CARD_PATHS[0])).json()
            extended = await rpc_result(http, "GetExtendedAgentCard", "1.0")
    urls = {
        (i["protocolBinding"], i["protocolVersion"]): i["url"] for i in card["supportedInterfaces"]
    }
    assert urls == {
        ("JSONRPC", "1.0"): "https://agents.example.com/a2a",
        ("HTTP+JSON", "1.0"): "https://agents.example.com/a2a",
        ("JSONRPC", "0.3"): "https://agents.example.com/a2a",
        ("HTTP+JSON", "0.3"): "https://agents.example.com/a2a",
    }
    assert card["url"] == "https://agents.example.com/a2a"
    assert extended["supportedInterfaces"] == card["supportedInterfaces"]


def test_served_interfaces_list_the_newest_minor_version_of_each_major() -> None:
    served_here = ServedInterfaces()
    served_here.add("JSONRPC", ["0.1", "0.3", "1.0"])
    served_here.add("HTTP+JSON", ["1.0"])
    served_here.add("HTTP+JSON", ["0.3"], "/v1/")
    served_here.add("GRPC", ["1.0"], "grpc")  # what another binding's one line would add
    served_here.add("JSONRPC", ["0.2"])  # older than what is listed already: nothing new
    listed = [
        (i.transport, i.protocol_version, i.url)
        for i in served_here.served_interfaces("https://a.example.com/x/")
    ]
    assert listed == [
        ("JSONRPC", "1.0", "https://a.example.com/x/"),
        ("HTTP+JSON", "1.0", "https://a.example.com/x"),
        ("GRPC", "1.0", "https://a.example.com/x/grpc"),
        ("JSONRPC", "0.3", "https://a.example.com/x/"),
        ("HTTP+JSON", "0.3", "https://a.example.com/x/v1"),
        ("JSONRPC", "0.2", "https://a.example.com/x/"),
    ]


def test_a_card_listing_no_1_0_interfaces_is_a_0_3_card_in_1_0() -> None:
    card = echo.agent.card("https://a.example.com/rpc").model_copy(
        update={
            "additional_interfaces": [
                AgentInterface(url="https://a.example.com/rpc", transport="JSONRPC"),
                AgentInterface(url="https://a.example.com/grpc", transport="GRPC"),
            ]
        }
    )
    assert card_v1_0.agent_card(card)["supportedInterfaces"] == [
        {
            "url": "https://a.example.com/rpc",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.3",
        },
        {"url": "https://a.example.com/grpc", "protocolBinding": "GRPC", "protocolVersion": "0.3"},
    ]


def test_a_1_0_interface_reads_as_a_canonical_one() -> None:
    wire = {"url": "u", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": "t"}
    interface = AgentInterface.model_validate(wire)
    assert (interface.transport, interface.protocol_version, interface.tenant) == (
        "HTTP+JSON",
        "1.0",
        "t",
    )
    card = AgentCard.model_validate(
        {**echo.agent.card("u").to_wire(), "supportedInterfaces": [wire]}
    )
    assert card.supported_interfaces == [interface]


# --- the extended card -----------------------------------------------------------------------


async def test_0_2_gets_the_extended_card_at_its_path(
    http: httpx.AsyncClient, schema_errors: SchemaErrors
) -> None:
    response = await http.get(EXTENDED_PATH)
    assert response.status_code == 200
    assert response.headers["cache-control"].startswith("private")
    card = response.json()
    assert card["name"] == "Auditor (members)"
    assert [skill["id"] for skill in card["skills"]] == ["audit", "audit-deep"]
    assert (
        card["supportedInterfaces"] == (await http.get(CARD_PATHS[0])).json()["supportedInterfaces"]
    )
    assert_valid_v0_3(without(card, ONLY_V1_0), schema_errors)
    assert_valid_v1("AgentCard", without(card, ONLY_V0_3))
    assert [error.message for error in _v0_2_5().iter_errors(card)] == []

    etag = response.headers["etag"]
    again = await http.get(EXTENDED_PATH, headers={"If-None-Match": etag})
    assert again.status_code == 304


async def test_without_an_extended_card_its_0_2_path_is_404_with_a_json_error() -> None:
    with served(rich_agent(extended=False).app()) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            response = await http.get(EXTENDED_PATH)
            public = (await http.get(CARD_PATHS[0])).json()
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == -32007
    assert "no authenticated extended card" in response.json()["error"]["message"]
    assert "supportsAuthenticatedExtendedCard" not in public
    assert "extendedAgentCard" not in public["capabilities"]


async def test_1_0_gets_the_extended_card_as_a_1_0_card(http: httpx.AsyncClient) -> None:
    card = await rpc_result(http, "GetExtendedAgentCard", "1.0")
    assert_valid_v1("AgentCard", card)
    assert card["name"] == "Auditor (members)"
    assert card["skills"][0]["securityRequirements"] == [
        {"schemes": {"oauth": {"list": ["tasks"]}}}
    ]
    assert not ONLY_V0_3["card"] & set(card)
    served = (await http.get(EXTENDED_PATH)).json()
    assert unsigned(card) == unsigned(without(served, ONLY_V0_3))
    await assert_signed(http, card)


async def test_0_3_gets_the_extended_card_as_a_0_3_card(
    http: httpx.AsyncClient, schema_errors: SchemaErrors
) -> None:
    card = await rpc_result(http, "agent/getAuthenticatedExtendedCard", "0.3")
    assert_valid_v0_3(card, schema_errors)
    assert card["name"] == "Auditor (members)"
    served = (await http.get(EXTENDED_PATH)).json()
    assert unsigned(card) == unsigned(without(served, ONLY_V1_0))
    await assert_signed(http, card)


def unsigned(card: Json) -> Json:
    return {name: value for name, value in card.items() if name != "signatures"}


async def assert_signed(http: httpx.AsyncClient, card: Json) -> None:
    """Each shape of the card carries a signature of its own, by the served keys."""
    keys = StaticKeys((await http.get("/.well-known/jwks.json")).json())
    assert len(card["signatures"]) == 1
    await verify_card(card, keys)


def test_each_version_can_say_anything_the_canonical_card_holds(
    schema_errors: SchemaErrors,
) -> None:
    signed = (
        rich_agent()
        .card("")
        .model_copy(
            update={
                "signatures": [
                    AgentCardSignature(
                        protected="eyJhbGciOiJFUzI1NiJ9", signature="c2ln", header={}
                    )
                ]
            }
        )
    )
    card = ServedInterfaces().card(signed, "https://a.example.com/")
    assert_valid_v1("AgentCard", card_v1_0.agent_card(card))
    assert_valid_v0_3(v0_3.agent_card(card), schema_errors)
    assert card_v1_0.agent_card(card)["signatures"] == v0_3.agent_card(card)["signatures"]
