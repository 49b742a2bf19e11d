"""The host presenting credentials to protected agents: per registry entry, or configured."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from accord import Agent, Client, create_app
from accord.auth import ApiKey, Security
from accord.host import AgentRegistry, host_agent
from accord.host.registry import configured_credentials
from accord.samples import echo
from accord.types import Task, TaskState
from agents_for_tests import CURATOR, HOST_TOKEN, SAFETY_TIMEOUT, AsksThenCompletes
from rpc import served
from sample_servers import finished

AGENTS = "/host/agents"
KEY = "key-of-team-a"


@pytest.fixture(scope="module")
def guarded_url() -> Iterator[str]:
    """The echo agent, answering only callers presenting the API key `KEY`."""
    guarded = Agent(
        echo.agent.executor,
        name="Echo",
        description="Repeats what you say, as a task with one artifact.",
        security=Security(ApiKey({KEY: "team-a"})),
    )
    with served(create_app(guarded)) as url:
        yield url


async def ask_host(host_url: str, text: str = "echo hello") -> Task:
    async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
        result = await client.send(text)
    assert isinstance(result, Task), result
    return result


def summary(task: Task) -> str:
    assert task.status.message is not None
    return task.status.message.text


async def test_the_host_presents_the_api_key_its_registry_entry_gives(
    tmp_path: Path, guarded_url: str
) -> None:
    registry_file = tmp_path / "agents.json"
    with served(create_app(host_agent(registry_file, agents=[], token=HOST_TOKEN))) as host_url:
        async with httpx.AsyncClient(
            base_url=host_url, timeout=SAFETY_TIMEOUT, headers=CURATOR
        ) as http:
            added = await http.post(AGENTS, json={"url": guarded_url})
            assert added.status_code == 201, added.text
            assert "credentials" not in added.json()
            refused = finished(await ask_host(host_url), TaskState.FAILED)
            assert summary(refused).startswith("Echo (failed): ")
            assert "apiKey" in summary(refused)

            added = await http.post(
                AGENTS, json={"url": guarded_url, "credentials": {"apiKey": KEY}}
            )
            assert added.status_code == 201, added.text
            assert added.json()["credentials"] == ["apiKey"]
            listed = await http.get(AGENTS)
            assert listed.json()[0]["credentials"] == ["apiKey"]
            assert KEY not in added.text and KEY not in listed.text

            assert summary(finished(await ask_host(host_url))) == "Echo: echo hello"

            # Adding it again without credentials refreshes its card and keeps its key.
            again = await http.post(AGENTS, json={"url": guarded_url})
            assert again.json()["credentials"] == ["apiKey"]
            finished(await ask_host(host_url))

            wrong = await http.post(
                AGENTS, json={"url": guarded_url, "credentials": {"apiKey": "x"}}
            )
            assert wrong.status_code == 201
            refused = finished(await ask_host(host_url), TaskState.FAILED)
            assert "Echo answered with an error" in summary(refused)

            # {} drops them.
            dropped = await http.post(AGENTS, json={"url": guarded_url, "credentials": {}})
            assert "credentials" not in dropped.json()
            finished(await ask_host(host_url), TaskState.FAILED)


async def test_the_registry_file_keeps_the_credentials_for_its_owner_only(
    tmp_path: Path, guarded_url: str
) -> None:
    registry_file = tmp_path / "agents.json"
    await AgentRegistry(registry_file).add(guarded_url, {"apiKey": KEY})
    assert stat.S_IMODE(registry_file.stat().st_mode) == 0o600
    saved = json.loads(registry_file.read_text())["agents"][0]
    assert saved["credentials"] == {"apiKey": KEY}
    # Another host using the same file presents them too.
    with served(create_app(host_agent(registry_file, agents=[], token=HOST_TOKEN))) as host_url:
        finished(await ask_host(host_url))


async def test_configured_credentials_serve_start_up_agents(
    tmp_path: Path, guarded_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACCORD_HOST_CREDENTIALS", json.dumps({guarded_url: {"apiKey": KEY}}))
    with served(create_app(host_agent(tmp_path / "agents.json", agents=[guarded_url]))) as url:
        assert summary(finished(await ask_host(url))) == "Echo: echo hello"
        async with httpx.AsyncClient(base_url=url, timeout=SAFETY_TIMEOUT, headers=CURATOR) as http:
            assert KEY not in (await http.get(AGENTS)).text
    assert KEY not in (tmp_path / "agents.json").read_text()


async def test_canceling_a_waiting_host_task_cancels_the_protected_remote_task(
    tmp_path: Path,
) -> None:
    asks = Agent(
        AsksThenCompletes(),
        name="Greeter",
        description="Greets you by name.",
        security=Security(ApiKey({KEY: "team-a"})),
    )
    with served(create_app(asks)) as greeter_url:
        registry = AgentRegistry(tmp_path / "agents.json")
        await registry.add(greeter_url, {"apiKey": KEY})
        with served(create_app(host_agent(registry))) as host_url:
            waiting = await ask_host(host_url, "greet me")
            assert waiting.status.state is TaskState.INPUT_REQUIRED, summary(waiting)
            assert waiting.status.message is not None and waiting.status.message.metadata
            remote_id = waiting.status.message.metadata["accord.host"]["taskId"]
            async with Client(host_url, timeout=SAFETY_TIMEOUT) as client:
                await client.cancel_task(waiting.id)
        async with Client(greeter_url, credentials=registry.credentials_for(greeter_url)) as c:
            assert (await c.get_task(remote_id)).status.state is TaskState.CANCELED


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"credentials": "key"}, "give credentials as a JSON object"),
        ({"credentials": {"password": "x"}}, "unknown credential setting 'password'"),
        ({"credentials": {"apiKey": 3}}, "'apiKey' must be text"),
        ({"credentials": {"basic": "no-colon"}}, 'give basic as "USER:PASSWORD"'),
        ({"credentials": {"clientId": "robot"}}, "give clientId and clientSecret together"),
    ],
)
async def test_unusable_credentials_are_refused_in_words(
    tmp_path: Path, guarded_url: str, body: dict[str, object], error: str
) -> None:
    with served(
        create_app(host_agent(tmp_path / "agents.json", agents=[], token=HOST_TOKEN))
    ) as host_url:
        async with httpx.AsyncClient(
            base_url=host_url, timeout=SAFETY_TIMEOUT, headers=CURATOR
        ) as http:
            refused = await http.post(AGENTS, json={"url": guarded_url, **body})
            assert refused.status_code == 400
            assert error in refused.json()["error"]
            assert (await http.get(AGENTS)).json() == []


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("{not json", "is not JSON"),
        ('["http://a"]', "must map URLs to credentials"),
        ('{"ftp://a": {}}', "not an http:// or https:// URL"),
        ('{"http://a": {"apiKey": 1}}', "'apiKey' must be text"),
    ],
)
def test_a_wrong_credentials_variable_is_said_in_words(value: str, error: str) -> None:
    with pytest.raises(ValueError, match="ACCORD_HOST_CREDENTIALS") as raised:
        configured_credentials(value)
    assert error in str(raised.value)
