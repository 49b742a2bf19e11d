"""Which `Host` names an agent's app answers, and where the URLs it publishes come from: the
public URL, else an allowed Host (the loopback names by default); `accord serve` says which."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from typer.testing import CliRunner

import accord
from accord import RequestContext, create_app
from accord.cli.main import app as cli
from accord.web.allowed_hosts import AllowedHosts
from rpc import request, send_params, served
from served_process import SERVING_COMMANDS, accord_serve

CARD = "/.well-known/agent-card.json"


@accord.agent
def where(context: RequestContext) -> str:
    """Says the URL it believes it is served at."""
    return context.base_url or "unknown"


def said(answer: httpx.Response) -> str:
    text: str = answer.json()["result"]["parts"][0]["text"]
    return text


async def test_with_a_port_only_the_loopback_names_at_that_port_are_answered() -> None:
    with served(create_app(where, http_port=8000)) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            assert (await http.get(CARD, headers={"Host": "localhost:8000"})).status_code == 200
            assert (await http.get(CARD, headers={"Host": "localhost:8001"})).status_code == 400


async def test_with_a_public_url_any_host_is_answered_and_every_url_is_the_public_one() -> None:
    public = "https://agents.example.com/a2a"
    with served(create_app(where, public_url=public)) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            forged = {"Host": "evil.example"}
            card = (await http.get(CARD, headers=forged)).json()
            answer = await http.post("/", json=request("message/send", send_params("hi")),
                                     headers=forged)  # fmt: skip
    assert card["url"] == public
    assert said(answer) == public


async def test_a_public_url_with_allowed_hosts_checks_them_too() -> None:
    app = create_app(where, public_url="https://agents.example.com", allowed_hosts=["127.0.0.1"])
    with served(app) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            assert (await http.get(CARD)).status_code == 200
            assert (await http.get(CARD, headers={"Host": "localhost"})).status_code == 400


async def test_star_answers_any_host_as_asked() -> None:
    with served(create_app(where, allowed_hosts=AllowedHosts(["*"]))) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            card = (await http.get(CARD, headers={"Host": "anywhere.example"})).json()
    assert card["url"] == "http://anywhere.example/"


def test_allowed_hosts_is_a_list_of_names() -> None:
    with pytest.raises(ValueError, match="list of names"):
        create_app(where, allowed_hosts="agents.example.com")
    with pytest.raises(ValueError, match="not a host name"):
        create_app(where, allowed_hosts=["agents.example.com/a2a"])


@pytest.mark.parametrize(
    ("host", "names"),
    [
        ("127.0.0.1", ["127.0.0.1:80", "localhost:80", "[::1]:80"]),
        ("0.0.0.0", ["127.0.0.1:80", "localhost:80", "[::1]:80"]),
        ("::", ["127.0.0.1:80", "localhost:80", "[::1]:80"]),
        ("10.0.0.5", ["127.0.0.1:80", "localhost:80", "[::1]:80", "10.0.0.5:80"]),
        ("fd00::5", ["127.0.0.1:80", "localhost:80", "[::1]:80", "[fd00::5]:80"]),
        ("agent.lan", ["127.0.0.1:80", "localhost:80", "[::1]:80", "agent.lan:80"]),
    ],
)
def test_a_server_answers_its_loopback_names_and_the_address_it_is_bound_to(
    host: str, names: list[str]
) -> None:
    assert list(AllowedHosts.serving(host, 80).patterns) == names


def test_a_bad_allowed_host_is_a_clear_error(tmp_path: Path) -> None:
    registry = str(tmp_path / "agents.json")
    for args in (["serve", "accord.samples.echo:agent"], ["host", "--registry", registry]):
        result = CliRunner().invoke(cli, [*args, "--store", "memory", "--allowed-host", "a b"])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: --allowed-host: 'a b' is not a host name")


@pytest.mark.processes
def test_agent_serve_refuses_a_bad_allowed_host(tmp_path: Path) -> None:
    script = (
        "from accord.samples.echo import agent\n"
        "agent.serve(port=0, store='memory', allowed_hosts=['agents.example.com', 'a b'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: allowed_hosts: 'a b' is not a host name")


@pytest.mark.processes
def test_serving_beyond_loopback_says_which_hosts_it_answers(tmp_path: Path) -> None:
    with accord_serve("accord.samples.echo:agent", "--host", "0.0.0.0", "--store", "memory",
                      cwd=tmp_path) as server:  # fmt: skip
        port = server.url.rsplit(":", 1)[1]
        names = f"127.0.0.1:{port}, localhost:{port}, [::1]:{port}"
        assert f"answering only requests for Host {names}; others get 400" in server.output
        assert "--allowed-host NAME" in server.output and "--public-url URL" in server.output
        assert httpx.get(server.url + CARD, headers={"Host": f"localhost:{port}"}).is_success
        refused = httpx.get(server.url + CARD, headers={"Host": f"10.1.2.3:{port}"})
        assert refused.status_code == 400


@pytest.mark.processes
def test_allowed_hosts_are_answered_besides_the_served_names(tmp_path: Path) -> None:
    options = ("--allowed-host", ".example.com", "--store", "memory")
    with accord_serve("accord.samples.echo:agent", *options, cwd=tmp_path) as server:
        port = urlsplit(server.url).port
        assert f"answering requests for Host 127.0.0.1:{port}, localhost:{port}, [::1]:{port}," \
            " .example.com; others get 400" in server.output  # fmt: skip
        card = httpx.get(server.url + CARD, headers={"Host": "agents.example.com"}).json()
        assert card["url"] == "http://agents.example.com/"
        assert httpx.get(server.url + CARD, headers={"Host": f"localhost:{port}"}).is_success
        assert httpx.get(server.url + CARD, headers={"Host": "evil.test"}).status_code == 400


@pytest.mark.processes
@SERVING_COMMANDS
def test_every_command_answers_the_address_it_is_bound_to(
    tmp_path: Path, command: str, args: tuple[str, ...], ready_path: str
) -> None:
    """127.0.0.2 is a loopback address, but not one of the loopback names."""
    with accord_serve(
        *args, cwd=tmp_path, command=command, host="127.0.0.2", ready_path=ready_path
    ) as server:  # answers ready_path at its own address, 127.0.0.2:PORT
        port = urlsplit(server.url).port
        assert httpx.get(server.url + ready_path, headers={"Host": f"localhost:{port}"}).is_success
        other = httpx.get(server.url + ready_path, headers={"Host": f"127.0.0.3:{port}"})
        assert other.status_code == 400
