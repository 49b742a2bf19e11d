"""The toolbox sample: an accord agent calling the tools of a real MCP server (the mcp SDK's,
over streamable HTTP and over stdio)."""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accord.samples import toolbox
from accord.types import FilePart, FileWithBytes, TaskState, TextPart
from conftest import SchemaErrors
from live_server import serve_app
from mcp_servers import PNG, tools_app
from sample_servers import check_card, data_of, finished, follow, statuses, talk_to, task_id_of

TOOLS_SERVER = Path(__file__).resolve().parent / "mcp_servers.py"


@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    """The test MCP server over streamable HTTP, on loopback."""
    with serve_app(tools_app()) as base_url:
        yield base_url + "/mcp"


async def test_card_validates_and_describes_the_skill(schema_errors: SchemaErrors) -> None:
    card = await check_card(toolbox.agent, schema_errors)
    assert card["skills"][0]["id"] == "call_tool"


async def test_a_tool_called_by_name_gives_its_text_and_data(mcp_url: str) -> None:
    agent = toolbox.toolbox_agent([mcp_url])
    async with talk_to(agent) as client:
        events = await follow(client, "add a=2 b=3.5")
        task = finished(await client.get_task(task_id_of(events)))
    (artifact,) = task.artifacts or []
    assert artifact.name == "add"
    assert artifact.text == "5.5"
    assert data_of(artifact) == {"result": 5.5}
    assert (TaskState.WORKING, f"Calling add on {mcp_url}") in statuses(events)


async def test_arguments_as_json_and_a_file_back(mcp_url: str) -> None:
    agent = toolbox.toolbox_agent([mcp_url])
    async with talk_to(agent) as client:
        shouted = finished(await client.send('shout {"text": "quiet please"}'))
        drawn = finished(await client.send("dot"))
    assert (shouted.artifacts or [])[0].text == "QUIET PLEASE"
    (part,) = (drawn.artifacts or [])[0].parts
    assert isinstance(part, FilePart) and isinstance(part.file, FileWithBytes)
    assert part.file.mime_type == "image/png"
    assert base64.b64decode(part.file.bytes) == PNG


async def test_the_tools_are_listed_when_asked(mcp_url: str) -> None:
    agent = toolbox.toolbox_agent([mcp_url])
    async with talk_to(agent) as client:
        task = finished(await client.send("tools"))
    assert task.status.message is not None
    listing = task.status.message.text
    assert "- add: Add two numbers." in listing and "- dot: A tiny PNG." in listing


async def test_what_goes_wrong_is_said(mcp_url: str) -> None:
    agent = toolbox.toolbox_agent([mcp_url])
    async with talk_to(agent) as client:
        failed = finished(await client.send("divide a=1 b=0"), TaskState.FAILED)
        unknown = finished(await client.send("subtract a=1 b=2"), TaskState.REJECTED)
        unreadable = finished(await client.send("add 2 3"), TaskState.REJECTED)
    assert failed.status.message is not None
    assert "the tool divide of" in failed.status.message.text
    assert unknown.status.message is not None
    assert "There is no tool 'subtract'; the tools are: add, shout" in unknown.status.message.text
    assert unreadable.status.message is not None
    assert "key=value words or a JSON object" in unreadable.status.message.text


async def test_a_server_that_cannot_be_reached_fails_the_task() -> None:
    agent = toolbox.toolbox_agent(["http://127.0.0.1:9/mcp"])
    async with talk_to(agent) as client:
        task = finished(await client.send("tools"), TaskState.FAILED)
    assert task.status.message is not None
    assert "the MCP server http://127.0.0.1:9/mcp" in task.status.message.text


@pytest.mark.processes
async def test_the_configured_server_runs_over_stdio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(toolbox.SERVERS_VARIABLE, f"{sys.executable} {TOOLS_SERVER}")
    async with talk_to(toolbox.agent) as client:
        task = finished(await client.send("shout text=hello"))
    assert (task.artifacts or [])[0].parts[0] == TextPart(text="HELLO")


@given(st.text(max_size=80))
def test_any_message_is_a_call_a_listing_or_a_clear_refusal(text: str) -> None:
    try:
        call = toolbox.read_call(text)
    except toolbox.BadCall as exc:
        assert str(exc)
        return
    if call is not None:
        name, arguments = call
        assert name and isinstance(arguments, dict)


def test_arguments_read_as_json_where_they_can() -> None:
    assert toolbox.read_call("add a=2 b=-1.5 flag=true") == (
        "add",
        {"a": 2, "b": -1.5, "flag": True},
    )
    assert toolbox.read_call("greet name='Ada Lovelace'") == ("greet", {"name": "Ada Lovelace"})
    assert toolbox.read_call("  ") is None and toolbox.read_call("tools") is None
    with pytest.raises(toolbox.BadCall, match="are not JSON"):
        toolbox.read_call('add {"a": 1')
