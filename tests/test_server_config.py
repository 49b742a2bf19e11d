"""ServerConfig: one checked set of server settings that create_app, `accord serve` and
`Agent.serve` share."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

import accord
from accord import RequestContext, ServerConfig, create_app
from accord.cli.main import app as cli
from accord.server import ServerConfigError
from accord.web.allowed_hosts import AllowedHosts
from agents_for_tests import SAFETY_TIMEOUT
from rpc import served
from served_process import free_port

CARD = "/.well-known/agent-card.json"


@accord.agent
def quiet(context: RequestContext) -> str:
    """Answers ok."""
    return "ok"


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("public_url", "ftp://agents.example.com", "public_url must be an http:// or https://"),
        ("public_url", "https://agents.example.com/?x=1", "public_url cannot have a query"),
        ("allowed_hosts", "agents.example.com", "allowed_hosts is a list of names"),
        ("allowed_hosts", ["a b"], "allowed_hosts: 'a b' is not a host name"),
        ("push_allow", ["nonsense"], "push_allow: "),
        ("push_allow", "10.0.0.0/8", "push_allow is a list of names"),
        ("max_body_bytes", 0, "max_body_bytes must be at least 1"),
        ("max_body_memory", 0, "max_body_memory must be at least 1"),
        ("runner_ttl", 0, "runner_ttl must be positive"),
        ("handover_timeout", -1, "handover_timeout must be at least 0"),
        ("cleanup_interval", 0, "cleanup_interval must be positive"),
        ("grpc_port", 70000, "grpc_port must be a port"),
        ("http_port", -1, "http_port must be a port"),
    ],
)
def test_a_setting_that_cannot_be_is_refused_when_made_naming_it(
    setting: str, value: Any, message: str
) -> None:
    with pytest.raises(ServerConfigError) as made:
        ServerConfig(**{setting: value})
    assert made.value.field == setting
    assert str(made.value).startswith(message)
    with pytest.raises(ValueError, match=f"^{setting}"):  # create_app checks it the same way
        create_app(quiet, **{setting: value})


def test_patterns_and_lists_are_kept_as_the_values_they_stand_for() -> None:
    config = ServerConfig(allowed_hosts=["agents.example.com"], push_allow=["127.0.0.1"])
    assert isinstance(config.allowed_hosts, AllowedHosts)
    assert config.allowed_hosts.patterns == ("agents.example.com",)
    assert config.push_allow == ("127.0.0.1",)
    assert ServerConfig(allowed_hosts=config.allowed_hosts, push_allow=("127.0.0.1",)) == config


def test_of_sets_options_over_a_config_and_checks_them() -> None:
    base = ServerConfig(public_url="https://agents.example.com", debug=True)
    assert ServerConfig.of(base) is base
    assert ServerConfig.of(None, debug=True) == ServerConfig(debug=True)
    changed = ServerConfig.of(base, debug=False)
    assert changed.public_url == base.public_url and changed.debug is False
    with pytest.raises(ServerConfigError, match=r"^public_url"):
        ServerConfig.of(base, public_url="agents.example.com")


async def test_create_app_serves_as_its_config_says_options_over_it() -> None:
    config = ServerConfig(http_port=8000)
    app = create_app(quiet, config, http_port=8001)
    assert app.state.config == ServerConfig(http_port=8001)
    with served(app) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            assert (await http.get(CARD, headers={"Host": "localhost:8001"})).status_code == 200
            assert (await http.get(CARD, headers={"Host": "localhost:8000"})).status_code == 400
    with served(create_app(quiet, config)) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            assert (await http.get(CARD, headers={"Host": "localhost:8000"})).status_code == 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--public-url", "ftp://agents.example.com"], "error: --public-url must be an http://"),
        (["--allowed-host", "a b"], "error: --allowed-host: 'a b' is not a host name"),
        (["--push-allow", "nonsense"], "error: --push-allow: "),
        (["--grpc-port", "70000"], "error: --grpc-port must be a port"),
    ],
)
def test_accord_serve_names_the_option_of_a_setting_that_cannot_be(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["serve", "accord.samples.echo:agent", *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(message)
    assert list(tmp_path.iterdir()) == []  # refused before any store or key was made


@pytest.mark.processes
def test_agent_serve_serves_as_the_config_it_is_given_says(tmp_path: Path) -> None:
    port = free_port()
    script = (
        "from accord import ServerConfig\n"
        "from accord.samples.echo import agent\n"
        "config = ServerConfig(public_url='https://agents.example.com/echo', debug=True)\n"
        f"agent.serve(port={port}, store='memory', config=config, debug=False)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        card = _card_once_served(f"http://127.0.0.1:{port}", process)
        assert card["url"] == "https://agents.example.com/echo"
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    assert "clients reach it at https://agents.example.com/echo" in stderr


def _card_once_served(url: str, process: subprocess.Popen[str]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            card: dict[str, Any] = httpx.get(url + CARD, headers={"Host": "x"}).json()
            return card
        except httpx.TransportError:
            time.sleep(0.1)
    pytest.fail(f"Agent.serve did not start (exit status {process.poll()})")
