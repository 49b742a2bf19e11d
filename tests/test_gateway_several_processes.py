"""`accord gateway` in front of several upstreams, every one a process of its own: skill
routing and a path-prefix route on one store, upstreams a registry lists; a gateway killed
with SIGKILL in the middle of a task, started again on its SQLite file, takes the task over
and the caller resubscribes to exactly the events it missed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from accord import Client
from accord.client import RegistryClient
from accord.gateway.router import UPSTREAM_KEY
from accord.types import (
    Message,
    Role,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
    new_id,
)
from registry_cards import CURATOR, TOKEN
from served_process import STARTUP_TIMEOUT, accord_serve, accord_servers, free_port
from test_gateway_processes import official_upstream, upstream_url

pytestmark = pytest.mark.processes


def asking(text: str, skill: str | None = None, **ids: str) -> Message:
    metadata = {"skill": skill} if skill else None
    return Message(
        message_id=new_id(), role=Role.USER, parts=[TextPart(text=text)], metadata=metadata, **ids
    )


async def test_the_cli_routes_by_skill_and_by_path_prefix(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    with (
        official_upstream("JSONRPC", "0.3") as echo,
        accord_servers(["accord.samples.currency:agent", "--store", "memory"]) as [money],
    ):
        echo_url = upstream_url(echo)
        options = [echo_url, "--route", f"/money={money.url}", "--store", store]
        with accord_serve(*options, "--grpc-port", str(free_port()), command="gateway") as gw:
            async with Client(gw.url, transport="GRPC", version="1.0") as root:
                card = await root.get_card()
                echoed = await root.send(asking("hello", skill="echo"))
            async with Client(f"{gw.url}/money", transport="HTTP+JSON", version="0.3") as prefix:
                money_card = await prefix.get_card()
                asked = await prefix.send(asking("convert 100 USD"))
            async with Client(gw.url, version="1.0") as root:
                answered = await root.send(asking("to EUR", task_id=asked.id))
            async with httpx.AsyncClient() as http:
                health = await http.get(f"{gw.url}/health")
    assert [skill.id for skill in card.skills] == ["echo", "convert_currency"]
    assert isinstance(echoed, Task) and [a.text for a in echoed.artifacts or ()] == ["hello"]
    assert [skill.id for skill in money_card.skills] == ["convert_currency"]
    assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
    assert isinstance(answered, Task) and answered.status.state is TaskState.COMPLETED
    assert answered.metadata == {UPSTREAM_KEY: "money"}
    assert health.status_code == 200
    assert set(health.json()["upstreams"]) == {"official-echo", "money"}
    assert "serving Gateway at" in gw.output


async def test_the_cli_takes_the_agents_a_registry_lists(tmp_path: Path) -> None:
    registry_options = ["serve", "--store", f"sqlite:///{tmp_path / 'registry.db'}"]
    with (
        official_upstream("JSONRPC", "0.3") as echo,
        accord_servers(["accord.samples.currency:agent", "--store", "memory"]) as [money],
        accord_serve(*registry_options, "--token", TOKEN, command="registry") as registry,
    ):
        async with RegistryClient(registry.url, headers=CURATOR) as listing:
            await listing.add(money.url)
        options = [upstream_url(echo), "--registry", registry.url, "--store", "memory"]
        with accord_serve(*options, command="gateway") as gw:
            async with Client(gw.url, version="1.0") as client:
                card = await client.get_card()
                converted = await client.send(asking("2 USD to EUR", "convert_currency"))
    assert [skill.id for skill in card.skills] == ["echo", "convert_currency"]
    assert isinstance(converted, Task) and converted.status.state is TaskState.COMPLETED
    assert converted.metadata == {UPSTREAM_KEY: "currency"}


async def test_a_gateway_killed_mid_task_is_resumed_on_its_store(tmp_path: Path) -> None:
    """Two official upstreams sharing the skill `echo` (served as `zero/echo`, `one/echo`);
    a task of `one`, streamed through the gateway, which is killed (SIGKILL) and started again
    on its SQLite file with a short runner TTL: once the dead runner's heartbeat expired, the
    new gateway adopts the task and follows `one`'s task again (the name it kept in the store
    says where), and the caller, resubscribing from the last event id it saw, gets each event
    it missed once, up to the end."""
    release = tmp_path / "release"
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    with official_upstream("JSONRPC", "0.3") as zero, official_upstream("HTTP+JSON", "1.0") as one:
        urls = [f"zero={upstream_url(zero)}", f"one={upstream_url(one)}"]
        options = [*urls, "--store", store, "--runner-ttl", "3s"]
        with accord_serve(*options, command="gateway") as gw:
            client = Client(gw.url, transport="HTTP+JSON", version="1.0")
            async with client, client.stream(asking(f"hold {release}", "one/echo")) as stream:
                task = await anext(stream)
                working = await anext(stream)
                seen = stream.last_event_id
                gw.kill()
        assert isinstance(task, Task) and isinstance(working, TaskStatusUpdateEvent)
        assert seen is not None
        with accord_serve(*options, command="gateway") as gw:
            client = Client(gw.url, transport="HTTP+JSON", version="1.0")
            resumed = client.resubscribe(task.id, last_event_id=seen)
            async with client, resumed, asyncio.timeout(STARTUP_TIMEOUT):
                events, ids = [], []
                async for event in resumed:
                    events.append(event)
                    ids.append(resumed.last_event_id)
                    if "Resumed" in _note(event):  # taken over: the upstream may end it now
                        release.touch()
                every = [e async for e in client.resubscribe(task.id, last_event_id=0)]
                stored = await client.get_task(task.id)
    assert release.exists(), events  # the new gateway said it resumed the task
    assert ids == list(range(seen + 1, seen + 1 + len(events))), ids
    assert [_note(e) for e in events] == [_note(e) for e in every[seen:]]
    states = [e.status.state for e in events if isinstance(e, TaskStatusUpdateEvent)]
    assert states[0] is TaskState.WORKING and states[-1] is TaskState.COMPLETED
    assert stored.status.state is TaskState.COMPLETED
    assert [a.text for a in stored.artifacts or ()] == [f"hold {release}"]
    assert stored.metadata == {UPSTREAM_KEY: "one"}
    assert "skill 'echo' is offered by zero, one: served as zero/echo, one/echo" in gw.output


def _note(event: object) -> str:
    """What an event says: its type, state and status text."""
    status = getattr(event, "status", None)
    if status is None:
        return type(event).__name__
    text = status.message.text if status.message is not None else ""
    return f"{type(event).__name__} {status.state.value} {text}"
