"""A2A 0.3 over HTTP+JSON (`/v1/...`, 0.3 proto JSON) on real HTTP: routes, streams, errors."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from accord import Agent, AgentExecutor, create_app
from accord.codecs.protojson_v0_3 import MESSAGE, PART, proto_card
from accord.errors import InvalidParams
from accord.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    APIKeySecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    new_id,
)
from agents_for_tests import (
    GatedStreamer,
    switchboard,
)
from rest import RestClient, connect_rest, live_rest, reason, status_error, violations
from rpc import Json, connect, served
from rpc_v1_0 import send_v1

SWITCHBOARD = switchboard()
HOOK = "https://client.example.com/hook"
EXTENDED = AgentCard(
    name="Switchboard (extended)",
    description="More for members.",
    url="",
    version="1.0.0",
    icon_url="https://example.com/icon.png",
    capabilities=AgentCapabilities(streaming=True, state_transition_history=False),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[
        AgentSkill(
            id="audit",
            name="Audit",
            description="Audits.",
            tags=["internal"],
            security=[{"oauth": ["audit"]}],
        )
    ],
    security_schemes={
        "key": APIKeySecurityScheme(name="X-Key", in_="header", description="a key"),
        "oauth": OAuth2SecurityScheme(
            flows=OAuthFlows(
                authorization_code=AuthorizationCodeOAuthFlow(
                    authorization_url="https://id.example.com/auth",
                    token_url="https://id.example.com/token",
                    scopes={"audit": "Run audits"},
                ),
                client_credentials=ClientCredentialsOAuthFlow(
                    token_url="https://id.example.com/token", scopes={}
                ),
            )
        ),
        "bearer": HTTPAuthSecurityScheme(scheme="bearer", bearer_format="JWT"),
        "oidc": OpenIdConnectSecurityScheme(open_id_connect_url="https://id.example.com/.wk"),
        "mtls": MutualTLSSecurityScheme(),
    },
    security=[{"key": [], "mtls": []}, {"oauth": ["audit", "read"]}],
)


def agent_of(executor: AgentExecutor, **card: Any) -> Agent:
    return Agent(executor, name="Test agent", **card)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    app = create_app(agent_of(SWITCHBOARD, push_notifications=True, extended_card=EXTENDED))
    with served(app) as url:
        yield url


@pytest.fixture
async def rest(base_url: str) -> AsyncIterator[RestClient]:
    async with connect_rest(base_url, "0.3") as client:
        yield client


def message_03(text: str, **extra: Any) -> Json:
    """A 0.3 proto user message holding one text part."""
    return {"messageId": new_id(), "role": "ROLE_USER", "content": [{"text": text}], **extra}


def send_03(text: str, *, blocking: bool = True, **message: Any) -> Json:
    """A 0.3 proto SendMessageRequest (blocking unless told: proto3's default is not)."""
    request: Json = {"message": message_03(text, **message)}
    if blocking:
        request["configuration"] = {"blocking": True}
    return request


def text_03(obj: Json) -> str:
    """The text parts of a 0.3 proto message (`content`) or artifact (`parts`)."""
    parts = obj.get("content", obj.get("parts", []))
    return "\n".join(part["text"] for part in parts if "text" in part)


def member_of(result: Json) -> str:
    (member,) = result
    return member


async def send(rest: RestClient, text: str, **kwargs: Any) -> Json:
    """POST /v1/message:send; the unwrapped Task (or Message)."""
    result = await rest.ok("POST", "/v1/message:send", send_03(text, **kwargs))
    unwrapped: Json = result[member_of(result)]
    return unwrapped


async def completed_task_id(rest: RestClient) -> str:
    task = await send(rest, "finish this")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id: str = task["id"]
    return task_id


# --- shapes, without a server ----------------------------------------------------------------


def test_parts_convert_both_ways() -> None:
    proto = [
        {"text": "hi"},
        {"file": {"fileWithUri": "https://e.com/a.png", "mimeType": "image/png"}},
        {"file": {"fileWithBytes": "aGVsbG8="}},
        {"data": {"data": {"rows": [1, 2]}}},
    ]
    canonical = [PART.from_v1(part, f"content.{i}") for i, part in enumerate(proto)]
    assert canonical == [
        {"kind": "text", "text": "hi"},
        {"kind": "file", "file": {"uri": "https://e.com/a.png", "mimeType": "image/png"}},
        {"kind": "file", "file": {"bytes": "aGVsbG8="}},
        {"kind": "data", "data": {"rows": [1, 2]}},
    ]
    assert [PART.to_v1(part) for part in canonical] == proto


def test_what_the_proto_lacks_is_left_out() -> None:
    message = {
        "kind": "message",
        "messageId": "m",
        "role": "agent",
        "referenceTaskIds": ["t0"],
        "parts": [
            {"kind": "text", "text": "x", "metadata": {"a": 1}},
            {"kind": "file", "file": {"uri": "u", "name": "a.txt"}},
        ],
    }
    assert MESSAGE.to_v1(message) == {
        "messageId": "m",
        "role": "ROLE_AGENT",
        "content": [{"text": "x"}, {"file": {"fileWithUri": "u"}}],
    }


@pytest.mark.parametrize(
    ("part", "field"),
    [
        ({"text": "a", "data": {"data": {}}}, "message.content.0"),
        ({}, "message.content.0"),
        ({"text": 5}, "message.content.0.text"),
        ({"file": "a.png"}, "message.content.0.file"),
        ({"file": {"mimeType": "image/png"}}, "message.content.0.file"),
        ({"file": {"fileWithUri": 1}}, "message.content.0.file.fileWithUri"),
        ({"data": {"data": [1]}}, "message.content.0.data.data"),
    ],
)
def test_bad_parts_name_their_field(part: Json, field: str) -> None:
    message = {"messageId": "m", "role": "ROLE_USER", "content": [part]}
    with pytest.raises(InvalidParams) as caught:
        MESSAGE.from_v1(message, "message")
    assert caught.value.data[0]["field"] == field


def test_the_card_in_proto_shape() -> None:
    card = proto_card(EXTENDED.to_wire())
    assert "iconUrl" not in card
    assert card["capabilities"] == {"streaming": True}
    assert card["securitySchemes"] == {
        "key": {
            "apiKeySecurityScheme": {"name": "X-Key", "location": "header", "description": "a key"}
        },
        "oauth": {
            "oauth2SecurityScheme": {
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://id.example.com/auth",
                        "tokenUrl": "https://id.example.com/token",
                        "scopes": {"audit": "Run audits"},
                    }
                }
            }
        },
        "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}},
        "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://id.example.com/.wk"}},
        "mtls": {"mtlsSecurityScheme": {}},
    }
    assert card["security"] == [
        {"schemes": {"key": {"list": []}, "mtls": {"list": []}}},
        {"schemes": {"oauth": {"list": ["audit", "read"]}}},
    ]
    assert card["skills"][0]["security"] == [{"schemes": {"oauth": {"list": ["audit"]}}}]


# --- POST /v1/message:send -------------------------------------------------------------------


async def test_send_answers_with_the_task_in_proto_json(rest: RestClient) -> None:
    message = message_03("ping")
    result = await rest.ok(
        "POST", "/v1/message:send", {"message": message, "configuration": {"blocking": True}}
    )
    task = result["task"]
    assert "kind" not in task
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [text_03(a) for a in task["artifacts"]] == ["ping"]
    (sent,) = task["history"]
    assert sent == {
        **message,
        "taskId": task["id"],
        "contextId": task["contextId"],
    }


async def test_parts_keep_their_proto_shape(rest: RestClient) -> None:
    content = [
        {"text": "look"},
        {"file": {"fileWithBytes": "aGVsbG8=", "mimeType": "text/plain"}},
        {"file": {"fileWithUri": "https://example.com/cat.png"}},
        {"data": {"data": {"rows": [1, 2], "snake_case": True}}},
    ]
    task = await send(rest, "look", content=content)
    fetched = await rest.ok("GET", f"/v1/tasks/{task['id']}")
    assert fetched["history"][0]["content"] == content


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            {"message": {"messageId": "m", "role": "ROLE_USER", "content": [{}]}},
            "message.content.0",
        ),
        ({"message": {"messageId": "m", "role": "user", "content": []}}, "message.role"),
        (
            {"message": message_03("a"), "configuration": {"blocking": "maybe"}},
            "configuration.blocking",
        ),
        ({"configuration": {"blocking": True}}, "message"),
    ],
)
async def test_bad_requests_are_400_with_the_fields(
    rest: RestClient, body: Json, field: str
) -> None:
    error = await rest.error("POST", "/v1/message:send", body, status=400)
    assert error["status"] == "INVALID_ARGUMENT"
    assert violations(error) == [field]


# --- cancel, stream, subscribe ---------------------------------------------------------------


async def test_stream_refused_before_its_first_event_is_an_http_error(rest: RestClient) -> None:
    error = await rest.error("POST", "/v1/message:stream", send_03("reject this"), status=400)
    assert reason(error) == "CONTENT_TYPE_NOT_SUPPORTED"


@pytest.mark.parametrize("verb", ["GET", "POST"])
async def test_subscribe_sends_the_task_first_then_live_events(verb: str) -> None:
    agent = GatedStreamer(chunks=1)
    async with live_rest(agent_of(agent), "0.3") as rest:
        task = await send(rest, "go", blocking=False)
        await agent.started.wait()
        async with rest.stream(verb, f"/v1/tasks/{task['id']}:subscribe") as stream:
            first = await stream.next()
            agent.release_all()
            rest_of_it = await stream.rest()
    assert first.data["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert [member_of(e.data) for e in rest_of_it] == ["artifactUpdate", "statusUpdate"]


async def test_0_3_and_1_0_subscribers_of_one_task_see_the_same_events() -> None:
    agent = GatedStreamer(chunks=2)
    with served(create_app(agent_of(agent))) as base_url:
        async with connect_rest(base_url, "0.3") as old, connect_rest(base_url) as new:
            task = await send(old, "go", blocking=False)
            await agent.started.wait()
            async with (
                old.stream("GET", f"/v1/tasks/{task['id']}:subscribe") as old_stream,
                new.stream("GET", f"/tasks/{task['id']}:subscribe") as new_stream,
            ):
                firsts = [await old_stream.next(), await new_stream.next()]
                agent.release_all()
                old_events = [firsts[0], *await old_stream.rest()]
                new_events = [firsts[1], *await new_stream.rest()]
    assert [e.id for e in old_events] == [e.id for e in new_events]
    assert [member_of(e.data) for e in old_events] == [member_of(e.data) for e in new_events]
    assert old_events[-1].data["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


# --- push notification configs ---------------------------------------------------------------


async def test_push_configs_create_get_list_delete(rest: RestClient) -> None:
    task_id = await completed_task_id(rest)
    configs = f"/v1/tasks/{task_id}/pushNotificationConfigs"
    push = {
        "url": HOOK,
        "token": "t",
        "authentication": {"schemes": ["Bearer"], "credentials": "c"},
    }
    created = await rest.ok("POST", configs, {"pushNotificationConfig": push})
    config_id = created["pushNotificationConfig"]["id"]
    assert created == {
        "name": f"tasks/{task_id}/pushNotificationConfigs/{config_id}",
        "pushNotificationConfig": {**push, "id": config_id},
    }
    wrapped = {"configId": "second", "config": {"pushNotificationConfig": {"url": HOOK + "/2"}}}
    second = await rest.ok("POST", configs, wrapped)
    assert second == {
        "name": f"tasks/{task_id}/pushNotificationConfigs/second",
        "pushNotificationConfig": {"url": HOOK + "/2", "id": "second"},
    }
    assert await rest.ok("GET", f"{configs}/{config_id}") == created
    assert await rest.ok("GET", configs) == {"configs": [created, second]}
    assert await rest.ok("DELETE", f"{configs}/{config_id}") == {}
    assert await rest.ok("GET", configs) == {"configs": [second]}
    error = await rest.error("GET", f"{configs}/{config_id}", status=404)
    assert reason(error) == "TASK_NOT_FOUND"


async def test_a_push_config_needs_its_config(rest: RestClient) -> None:
    task_id = await completed_task_id(rest)
    configs = f"/v1/tasks/{task_id}/pushNotificationConfigs"
    error = await rest.error("POST", configs, {"url": HOOK}, status=400)
    assert violations(error) == ["pushNotificationConfig"]
    error = await rest.error(
        "POST", configs, {"config": {"pushNotificationConfig": {}}}, status=400
    )
    assert violations(error) == ["config.pushNotificationConfig.url"]


# --- GET /v1/card ----------------------------------------------------------------------------


async def test_card_is_the_extended_card_in_proto_json(rest: RestClient) -> None:
    card = await rest.ok("GET", "/v1/card")
    assert card["name"] == "Switchboard (extended)"
    assert card["securitySchemes"]["bearer"] == {
        "httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}
    }


# --- versions and HTTP-level errors ----------------------------------------------------------


@pytest.mark.parametrize("header", ["", "0.3", "0.3.0", "0.2.5"])
async def test_the_v1_routes_serve_0_3_and_requests_naming_no_version(
    base_url: str, header: str
) -> None:
    async with connect_rest(base_url, "0.3", header=header) as rest:
        assert await completed_task_id(rest)


async def test_a_0_3_route_asked_for_in_1_0_is_400(base_url: str) -> None:
    async with connect_rest(base_url, "0.3", header="1.0") as rest:
        error = await rest.error("POST", "/v1/message:send", send_03("hi"), status=400)
        query = {"A2A-Version": "1.0"}
        async with connect_rest(base_url, "0.3", header="") as plain:
            by_query = await plain.error("GET", "/v1/tasks/x", params=query, status=400)
    assert (error["status"], reason(error)) == ("FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
    assert "POST /v1/message:send is an A2A 0.3 route" in error["message"]
    assert "without the /v1 prefix" in error["message"]
    assert reason(by_query) == "VERSION_NOT_SUPPORTED"


async def test_an_unsupported_version_is_400(base_url: str) -> None:
    async with connect_rest(base_url, "0.3", header="0.5") as rest:
        error = await rest.error("GET", "/v1/card", status=400)
    assert reason(error) == "VERSION_NOT_SUPPORTED"


async def test_a_1_0_body_on_a_0_3_route_is_400(rest: RestClient) -> None:
    error = await rest.error("POST", "/v1/message:send", send_v1("hi"), status=400)
    assert violations(error) == ["message.parts"]
    assert "did you mean content?" in error["message"]


@pytest.mark.parametrize(
    ("verb", "path", "status"),
    [
        ("GET", "/v1/tasks", 404),
        ("GET", "/v1/nope", 404),
        ("GET", "/v1/message:send", 405),
        ("PUT", "/v1/tasks/x", 405),
        ("POST", "/v1/card", 405),
        ("GET", "/v1/tasks/x:cancel", 405),
    ],
)
async def test_unknown_routes_and_wrong_verbs(
    rest: RestClient, verb: str, path: str, status: int
) -> None:
    error = status_error(await rest.request(verb, path), status)
    assert path in error["message"]


async def test_a_body_not_declared_as_json_is_415(rest: RestClient) -> None:
    response = await rest.http.post(
        "/v1/message:send", content=b"{}", headers={"Content-Type": "text/plain"}
    )
    status_error(response, 415, "application/json")


async def test_json_rpc_and_rest_share_the_tasks(base_url: str, rest: RestClient) -> None:
    async with connect(base_url) as rpc:
        made = await rpc.send("over json-rpc")
    fetched = await rest.ok("GET", f"/v1/tasks/{made['id']}")
    assert text_03(fetched["artifacts"][0]) == "over json-rpc"
