"""The CLI's credentials: global options and ACCORD_* variables, and what it says when an agent
wants credentials it was not given."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner, Result

import accord
from accord import RequestContext
from accord.auth import ApiKey, Basic, Security
from accord.cli.main import app
from rpc import served


@accord.agent
def whoami(context: RequestContext) -> str:
    """Names the caller."""
    return f"hello {context.principal.id}"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    security = Security(
        ApiKey({"cli-key": "cli-user"}), Basic(lambda u, p: u if p == "pw" else None)
    )
    agent = accord.Agent(whoami.executor, name="Guarded", security=security)
    with served(agent.app()) as base_url:
        yield base_url


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


def test_without_credentials_the_cli_says_what_the_agent_wants(url: str) -> None:
    result = invoke("send", url, "hi")
    assert result.exit_code == 6
    assert "asks for apiKey (an API key in the header 'X-API-Key')" in result.output
    assert "or basic (a user and password (HTTP Basic))" in result.output
    assert "--api-key KEY" in result.output


def test_credentials_from_options_and_the_environment(url: str) -> None:
    by_option = invoke("--api-key", "cli-key", "send", url, "hi")
    assert by_option.exit_code == 0, by_option.output
    assert "hello cli-user" in by_option.output
    by_env = invoke("send", url, "hi", env={"ACCORD_BASIC": "ada:pw"})
    assert by_env.exit_code == 0, by_env.output
    assert "hello ada" in by_env.output


def test_wrong_credentials_are_reported_with_the_hint(url: str) -> None:
    result = invoke("--api-key", "guess", "send", url, "hi")
    assert result.exit_code == 6
    assert "Unauthenticated" in result.output and "apiKey: the API key" in result.output
    assert "ACCORD_API_KEY" in result.output


def test_malformed_credential_options_are_usage_errors(url: str) -> None:
    assert invoke("--basic", "no-colon", "send", url, "hi").exit_code == 2
    assert invoke("--client-id", "robot", "send", url, "hi").exit_code == 2
    assert invoke("--key", "k.pem", "send", url, "hi").exit_code == 2


def test_serve_options_are_checked() -> None:
    assert invoke("serve", "accord.samples.echo:agent", "--tls-key", "k.pem").exit_code == 2
    assert invoke("serve", "accord.samples.echo:agent", "--rate-limit", "lots").exit_code == 2
