"""A card that requires credentials nothing checks: the app refuses to start, unless an
authenticator enforces it or the agent publishes it unenforced on purpose."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import accord
from accord import create_app
from accord.cli.main import app as cli
from accord.core import Inbound, Principal
from accord.errors import Unauthenticated
from accord.samples import echo
from accord.types import AgentSkill, HTTPAuthSecurityScheme
from rpc import request, send_params, served

BEARER = {"bearer": HTTPAuthSecurityScheme(scheme="bearer")}


def declaring(security: list[dict[str, list[str]]], **options: object) -> accord.Agent:
    return accord.Agent(
        echo.message_agent.executor,
        name="Declared",
        security_schemes=BEARER,
        security=security,
        **options,  # type: ignore[arg-type]
    )


def test_a_requirement_nothing_enforces_refuses_to_start() -> None:
    with pytest.raises(ValueError) as refused:
        create_app(declaring([{"bearer": []}]))
    message = str(refused.value)
    assert "the card of Declared requires bearer but no Security enforces it" in message
    assert "accord.auth.Security(...)" in message and "enforce_security=False" in message


def test_a_skill_requirement_nothing_enforces_refuses_to_start() -> None:
    skill = AgentSkill(id="s", name="S", description="S", tags=[], security=[{"bearer": []}])
    agent = accord.Agent(
        echo.agent.executor, name="Skilled", security_schemes=BEARER, skills=[skill]
    )
    with pytest.raises(ValueError, match="the skill 's' of Skilled requires bearer"):
        create_app(agent)


def test_a_card_that_lets_anyone_in_starts() -> None:
    create_app(declaring([{"bearer": []}, {}]))  # bearer, or nothing at all
    create_app(declaring([]))


class BearerCheck:
    async def authenticate(self, inbound: Inbound) -> Principal:
        if inbound.headers.get("Authorization") != "Bearer let-me-in":
            raise Unauthenticated("send a bearer token", challenges=["Bearer"])
        return Principal("me", scheme="bearer")


async def test_an_authenticator_given_enforces_it() -> None:
    with served(create_app(declaring([{"bearer": []}]), authenticator=BearerCheck())) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            call = request("message/send", send_params("hi"))
            assert (await http.post("/", json=call)).status_code == 401
            allowed = await http.post("/", json=call, headers={"Authorization": "Bearer let-me-in"})
    assert allowed.json()["result"]["parts"][0]["text"] == "hi"


async def test_published_unenforced_on_purpose() -> None:
    app = create_app(declaring([{"bearer": []}], enforce_security=False))
    with served(app) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            card = (await http.get("/.well-known/agent-card.json")).json()
            answer = await http.post("/", json=request("message/send", send_params("hi")))
    assert card["security"] == [{"bearer": []}]
    assert answer.json()["result"]["parts"][0]["text"] == "hi"


def test_accord_serve_says_it_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "declared.py").write_text(
        "import accord\n"
        "from accord.samples import echo\n"
        "from accord.types import HTTPAuthSecurityScheme\n"
        "agent = accord.Agent(echo.agent.executor, name='Declared',\n"
        "    security_schemes={'bearer': HTTPAuthSecurityScheme(scheme='bearer')},\n"
        "    security=[{'bearer': []}])\n"
    )
    monkeypatch.chdir(tmp_path)
    with socket.socket() as taken:  # said before the port is looked at (and never served)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = CliRunner().invoke(
            cli, ["serve", "declared:agent", "--store", "memory", "--port", port]
        )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: the card of Declared requires bearer")
    assert result.exception is None or isinstance(result.exception, SystemExit)
