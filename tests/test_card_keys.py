"""`accord card verify URL` and `accord push listen --agent URL` find the agent's keys where
its card's signature says (`jku`), when that is on the card's own origin: an agent served
below a path is checked against its own keys, keys elsewhere only when the user names them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jwt.utils import base64url_encode
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from typer.testing import CliRunner

from accord import create_app
from accord.cli.main import app as cli
from accord.client.card_keys import AgentKeys, card_jwks_url
from accord.errors import A2AClientError
from accord.keys import JwksError, KeySetUnavailable, KeyStore, sign_card
from accord.keys.cards import JWKS_PATH
from live_server import serve_app
from rpc import request, send_params
from test_cli_push import PUSHING_ECHO, listening, next_line
from test_public_url import proxied

CARD_PATH = "/.well-known/agent-card.json"


def signed_with_jku(*jkus: str, keys: KeyStore | None = None) -> dict[str, Any]:
    card: dict[str, Any] = {"name": "Somewhere", "version": "1"}
    for jku in jkus:
        card = sign_card(card, (keys or KeyStore.ephemeral()).active(), jku=jku)
    return card


@pytest.mark.parametrize(
    ("source", "jkus", "expected"),
    [
        # the jku on the card's origin, path and all
        ("https://a.example/x/.well-known/agent-card.json", ["https://a.example/x/jwks"],
         "https://a.example/x/jwks"),
        ("http://a.example/.well-known/agent-card.json", ["http://A.example:80/k.json"],
         "http://A.example:80/k.json"),
        # the first one on the card's origin
        ("https://a.example/.well-known/agent-card.json",
         ["https://b.example/jwks", "https://a.example/jwks"], "https://a.example/jwks"),
        # none named: beside the card, below the agent's path
        ("https://a.example/x/.well-known/agent-card.json", [],
         "https://a.example/x" + JWKS_PATH),
        ("https://a.example/x/.well-known/agent.json", [], "https://a.example/x" + JWKS_PATH),
    ],
)  # fmt: skip
def test_the_keys_of_a_card(source: str, jkus: list[str], expected: str) -> None:
    assert card_jwks_url(signed_with_jku(*jkus), source) == expected


@pytest.mark.parametrize(
    "jku",
    [
        "https://evil.example/jwks",
        "http://a.example/jwks",  # another scheme
        "https://a.example:8443/jwks",  # another port
        "https://a.example.evil.example/jwks",
    ],
)
def test_keys_on_another_origin_are_not_followed(jku: str) -> None:
    with pytest.raises(A2AClientError, match="not on the card's own origin"):
        card_jwks_url(signed_with_jku(jku), "https://a.example" + CARD_PATH)


def test_no_jku_is_followed_from_a_card_whose_origin_is_unknown() -> None:
    with pytest.raises(A2AClientError, match="not on the card's own origin"):
        card_jwks_url(signed_with_jku("http://[::1/jwks"), "http://[::1/.well-known/agent.json")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@given(
    headers=st.lists(JSON | st.fixed_dictionaries({"jku": st.text()}), max_size=3),
    raw=st.lists(st.text(), max_size=2),
    source=st.sampled_from(["https://a.example/.well-known/agent-card.json", "http://[::1"]),
)
def test_any_signature_header_gives_a_url_or_a_client_error(
    headers: list[Any], raw: list[str], source: str
) -> None:
    protected = [base64url_encode(json.dumps(header).encode()).decode() for header in headers]
    card = {"signatures": [{"protected": value} for value in [*protected, *raw]] + [None, 1]}
    with suppress(A2AClientError):
        assert isinstance(card_jwks_url(card, source), str)


@contextmanager
def agent_below_a_path() -> Iterator[str]:
    """A pushing agent at `{proxy}/a2a` (its keys at `{proxy}/a2a/.well-known/jwks.json`, none
    at the proxy's root): yields its public URL."""
    with proxied() as (proxy, public):
        app = create_app(PUSHING_ECHO, public_url=public, push_allow=["127.0.0.1"])
        with serve_app(app) as upstream:
            proxy.upstream = upstream
            yield public


def test_card_verify_uses_the_jku_below_the_agent_path() -> None:
    with agent_below_a_path() as public:
        assert httpx.get(public.rsplit("/", 1)[0] + JWKS_PATH).status_code == 404
        result = CliRunner().invoke(cli, ["card", "verify", public])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{public}{CARD_PATH}: signature valid (key ")


def test_card_verify_follows_no_jku_elsewhere_unless_told() -> None:
    keys = KeyStore.ephemeral()
    card = signed_with_jku("http://keys.example/jwks.json", keys=keys)
    routes = [
        Route(CARD_PATH, lambda _: JSONResponse(card)),
        Route("/trusted/jwks.json", lambda _: JSONResponse(keys.jwks())),
    ]
    with serve_app(Starlette(routes=routes)) as url:
        refused = CliRunner().invoke(cli, ["card", "verify", url])
        told = CliRunner().invoke(
            cli, ["card", "verify", url, "--jwks", url + "/trusted/jwks.json"]
        )
    assert refused.exit_code == 1
    assert "names its signing keys at http://keys.example/jwks.json" in refused.stderr
    assert "--jwks URL" in refused.stderr
    assert told.exit_code == 0, told.output


async def test_keys_named_elsewhere_are_a_lasting_refusal_and_a_down_agent_a_passing_one() -> None:
    card = signed_with_jku("http://keys.example/jwks.json")
    agent = Starlette(routes=[Route(CARD_PATH, lambda _: JSONResponse(card))])
    with serve_app(agent) as url, pytest.raises(JwksError) as elsewhere:
        await AgentKeys(url).key(None)
    with pytest.raises(KeySetUnavailable):  # the same port, now closed
        await AgentKeys(url).key(None)
    assert not isinstance(elsewhere.value, KeySetUnavailable)


@pytest.mark.processes
def test_push_listen_verifies_with_the_keys_the_card_names() -> None:
    with agent_below_a_path() as public, listening("--agent", public) as (port, lines, errors):
        hook = f"http://127.0.0.1:{port}/"
        configuration = {"blocking": True, "pushNotificationConfig": {"url": hook}}
        call = request("message/send", send_params("hello", configuration=configuration))
        answer = httpx.post(public + "/", json=call, timeout=10)
        assert answer.json()["result"]["status"]["state"] == "completed"
        printed = [next_line(lines)]
        while not printed[-1].endswith("completed"):
            printed.append(next_line(lines))
    assert not any("refused" in line for line in errors), errors
    assert printed[-1].endswith("task completed")
