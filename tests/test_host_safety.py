"""Who may change the host's agents, and what they may make it fetch and load."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from accord import create_app
from accord.auth import ApiKey, Security
from accord.core import Principal
from accord.host import host_agent
from accord.host.curators import CURATOR_SCOPE
from accord.samples import currency
from accord.web.webhook_guard import WebhookGuard
from agents_for_tests import CURATOR, HOST_TOKEN, SAFETY_TIMEOUT
from card_servers import huge_card_server, internal_service
from live_server import serve_app
from rpc import served

AGENTS = "/host/agents"


@pytest.fixture(scope="module")
def currency_url() -> Iterator[str]:
    with served(create_app(currency.agent)) as url:
        yield url


def post(host: str, body: object, **headers: str) -> httpx.Response:
    return httpx.post(host + AGENTS, json=body, headers=headers, timeout=SAFETY_TIMEOUT)


def test_only_the_token_changes_the_agents(tmp_path: Path, currency_url: str) -> None:
    with served(create_app(host_agent(tmp_path / "a.json", agents=[], token=HOST_TOKEN))) as host:
        refused = post(host, {"url": currency_url})
        assert refused.status_code == 401 and "Bearer" in refused.headers["WWW-Authenticate"]
        assert post(host, {"url": currency_url}, Authorization="Bearer wrong").status_code == 401
        deleted = httpx.delete(host + AGENTS, params={"url": currency_url})
        assert deleted.status_code == 401
        assert httpx.get(host + AGENTS).json() == []
        assert post(host, {"url": currency_url}, **CURATOR).status_code == 201
        assert [a["name"] for a in httpx.get(host + AGENTS).json()] == ["Currency"]


def test_without_a_token_or_security_nobody_changes_the_agents(
    tmp_path: Path, currency_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ACCORD_HOST_TOKEN", raising=False)
    with served(create_app(host_agent(tmp_path / "a.json", agents=[]))) as host:
        refused = post(host, {"url": currency_url}, Authorization="Bearer anything")
        assert refused.status_code == 403
        assert "ACCORD_HOST_TOKEN" in refused.json()["error"]


def test_a_host_with_security_lets_curators_change_its_agents(
    tmp_path: Path, currency_url: str
) -> None:
    def verify(key: str) -> Principal | None:
        scopes = frozenset({CURATOR_SCOPE}) if key == "curator" else frozenset()
        return Principal(key, scopes=scopes) if key in ("curator", "user") else None

    security = Security(ApiKey(verify=verify))
    with served(create_app(host_agent(tmp_path / "a.json", agents=[], security=security))) as host:
        assert post(host, {"url": currency_url}).status_code == 401
        user = post(host, {"url": currency_url}, **{"X-API-Key": "user"})
        assert user.status_code == 403 and CURATOR_SCOPE in user.json()["error"]
        assert post(host, {"url": currency_url}, **{"X-API-Key": "curator"}).status_code == 201


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Origin": "http://127.0.0.1:1"}, 403),
        ({"Origin": "null"}, 403),
        ({"Sec-Fetch-Site": "cross-site"}, 403),
        ({"Sec-Fetch-Site": "same-site"}, 403),
        ({"Content-Type": "text/plain"}, 415),
    ],
)
def test_a_change_from_another_origin_or_not_json_is_refused(
    tmp_path: Path, currency_url: str, headers: dict[str, str], status: int
) -> None:
    with served(create_app(host_agent(tmp_path / "a.json", agents=[], token=HOST_TOKEN))) as host:
        body = json.dumps({"url": currency_url})
        sent = {"Content-Type": "application/json", **CURATOR, **headers}
        answer = httpx.post(host + AGENTS, content=body, headers=sent, timeout=SAFETY_TIMEOUT)
        assert answer.status_code == status, answer.text
        assert httpx.get(host + AGENTS).json() == []


@pytest.mark.parametrize("setting", ["cert", "key", "ca"])
def test_credentials_naming_files_are_refused_over_http(
    tmp_path: Path, currency_url: str, setting: str
) -> None:
    secret = tmp_path / "secret.pem"
    secret.write_text("not for strangers")
    credentials = {"cert": str(secret), "key": str(secret), setting: "/etc/shadow"}
    with served(create_app(host_agent(tmp_path / "a.json", agents=[], token=HOST_TOKEN))) as host:
        refused = post(host, {"url": currency_url, "credentials": credentials}, **CURATOR)
        assert refused.status_code == 400
        assert "configured by the operator" in refused.json()["error"]
        assert "not for strangers" not in refused.text
        assert httpx.get(host + AGENTS).json() == []
    assert not (tmp_path / "a.json").exists()


def test_a_guarded_host_fetches_no_loopback_private_or_metadata_address(
    tmp_path: Path, currency_url: str
) -> None:
    guarded = host_agent(
        tmp_path / "a.json", agents=[], token=HOST_TOKEN, fetch_guard=WebhookGuard()
    )
    with served(create_app(guarded)) as host, serve_app(internal_service()) as internal:
        for url, why in [
            (currency_url, "a loopback address"),
            (internal + "/#", "a loopback address"),
            ("http://169.254.169.254/latest/meta-data/", "a cloud metadata address"),
            ("http://10.1.2.3:8080/", "a private address"),
            ("http://[::ffff:127.0.0.1]:1/", "a loopback address"),
        ]:
            refused = post(host, {"url": url}, **CURATOR)
            assert refused.status_code == 400 and why in refused.json()["error"], refused.text
            assert "internal-service-data" not in refused.text
        assert httpx.get(host + AGENTS).json() == []


def test_the_allowlist_lets_a_guarded_host_reach_development_agents(
    tmp_path: Path, currency_url: str
) -> None:
    guard = WebhookGuard(["127.0.0.0/8"])
    agent = host_agent(tmp_path / "a.json", agents=[], token=HOST_TOKEN, fetch_guard=guard)
    with served(create_app(agent)) as host:
        assert post(host, {"url": currency_url}, **CURATOR).status_code == 201


def test_a_card_larger_than_a_mebibyte_is_refused_and_not_saved(tmp_path: Path) -> None:
    registry = tmp_path / "a.json"
    with (
        served(create_app(host_agent(registry, agents=[], token=HOST_TOKEN))) as host,
        serve_app(huge_card_server(declared=False)) as huge,
    ):
        refused = post(host, {"url": huge}, **CURATOR)
        assert refused.status_code == 400 and "larger than 1 MiB" in refused.json()["error"]
    assert not registry.exists()


def test_an_agent_without_a_card_shape_is_never_shown(tmp_path: Path) -> None:
    with (
        served(create_app(host_agent(tmp_path / "a.json", agents=[], token=HOST_TOKEN))) as host,
        serve_app(internal_service()) as internal,
    ):
        refused = post(host, {"url": internal}, **CURATOR)
        assert refused.status_code == 400
        assert "internal-service-data" not in refused.text
