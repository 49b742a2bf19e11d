"""`accord gateway` in front of several upstreams, every one a process of its own: skill
routing and a path-prefix route on one store."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from accord import Client
from accord.gateway.router import UPSTREAM_KEY
from accord.types import (
    Message,
    Role,
    Task,
    TaskState,
    TextPart,
    new_id,
)
from served_process import accord_serve, accord_servers, free_port
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
