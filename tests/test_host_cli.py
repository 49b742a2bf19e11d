"""The host from the command line: `accord serve accord.host:agent` and `accord host`."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from accord import SyncClient, create_app
from accord.client import BearerToken, Credentials
from accord.errors import A2AError
from accord.samples import currency, image
from accord.types import Task, TaskState
from agents_for_tests import SAFETY_TIMEOUT
from rpc import served
from served_process import STARTUP_TIMEOUT, accord_command, accord_serve, free_port


def wait_until_listening(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT  # a loaded machine imports slowly
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url + "/.well-known/agent-card.json").status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    pytest.fail(f"accord host did not start: {process.communicate()[1]}")


@pytest.mark.processes
def test_serve_the_host_with_agents_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = tmp_path / "registry.json"
    with served(create_app(currency.agent)) as currency_url:
        monkeypatch.setenv("ACCORD_HOST_AGENTS", currency_url)
        monkeypatch.setenv("ACCORD_HOST_REGISTRY", str(registry))
        with accord_serve("accord.host:agent", "--store", "memory", cwd=tmp_path) as host:
            listed = httpx.get(host.url + "/host/agents").json()
            assert [entry["url"] for entry in listed] == [currency_url]
            with SyncClient(host.url, timeout=SAFETY_TIMEOUT) as client:
                result = client.send("convert 10 USD to EUR")
        assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
        assert registry.exists() and not (tmp_path / ".accord" / "host").exists()


@pytest.mark.processes
def test_accord_host_knows_the_agents_given_and_keeps_them_in_its_file(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (
        served(create_app(currency.agent)) as currency_url,
        served(create_app(image.agent)) as image_url,
    ):
        environment = {**os.environ, "ACCORD_HOST_AGENTS": currency_url}
        environment.pop("ACCORD_HOST_REGISTRY", None)
        process = subprocess.Popen(
            accord_command("host", "--agent", image_url, "--port", str(port), "--store", "memory"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=environment,
        )
        try:
            wait_until_listening(url, process)
            listed = httpx.get(url + "/host/agents").json()
            assert [entry["name"] for entry in listed] == ["Currency", "Image"]
            card = httpx.get(url + "/.well-known/agent-card.json").json()
            assert card["name"] == "Host" and card["skills"][0]["id"] == "delegate"
            assert "security" not in card  # on loopback, calls need no token
            assert httpx.post(url + "/host/agents", json={"url": "ftp://x"}).status_code == 401
            rebound = httpx.get(url + "/host/agents", headers={"Host": f"evil.test:{port}"})
            assert rebound.status_code == 400
        finally:
            process.terminate()
            _, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    assert "the agents it knows are kept in .accord/host/agents.json" in stderr
    [token] = re.findall(r"Authorization: Bearer (\S+)", stderr)
    assert len(token) > 20
    assert (tmp_path / ".accord" / "host" / "agents.json").exists()  # the default place


@pytest.mark.processes
def test_beyond_loopback_accord_host_requires_its_token_on_every_call(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    environment = {**os.environ, "ACCORD_HOST_TOKEN": "printed-token"}
    process = subprocess.Popen(
        accord_command("host", "--host", "0.0.0.0", "--port", str(port), "--store", "memory",
                       "--allowed-host", "host.example.com"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env=environment,
    )  # fmt: skip
    try:
        wait_until_listening(url, process)
        with SyncClient(url, timeout=SAFETY_TIMEOUT) as client, pytest.raises(A2AError):
            client.send("Which agents do you know?")
        credentials = Credentials(BearerToken("printed-token"))
        with SyncClient(url, timeout=SAFETY_TIMEOUT, credentials=credentials) as client:
            assert client.send("Which agents do you know?").text
        token = {"Authorization": "Bearer printed-token"}
        assert httpx.get(url + "/host/agents").status_code == 401  # its routes too
        named = httpx.get(url + "/host/agents", headers={**token, "Host": "host.example.com"})
        assert named.status_code == 200
        rebound = httpx.get(url + "/host/agents", headers={**token, "Host": "evil.test"})
        assert rebound.status_code == 400
        guarded = httpx.post(url + "/host/agents", json={"url": url}, headers=token)
        assert guarded.status_code == 400 and "a loopback address" in guarded.text
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=SAFETY_TIMEOUT)
    assert "listening beyond loopback: every A2A call needs that token" in stderr
