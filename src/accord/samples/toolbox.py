"""Toolbox: an agent whose tools are those of MCP servers (`accord.mcp.tools`).

Shows: an agent using MCP tools — listed when asked, called by name with the arguments the
message gives (`key=value` words or a JSON object), the call shown as a `working` update and
the tool's result (text, files, structured content) sent on as the task's artifact; a tool's
error fails the task with what the tool said.

    ACCORD_MCP_SERVERS="python my_tools.py" accord serve accord.samples.toolbox:agent
    accord send http://127.0.0.1:8000 "tools"
    accord send http://127.0.0.1:8000 "add a=2 b=3"

The servers are `ACCORD_MCP_SERVERS`, separated by `;`: `http(s)://` URLs (streamable HTTP)
or commands serving MCP on stdio; each request connects to them anew.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from typing import Any

import accord
from accord.agents import EventSink
from accord.mcp import ServerUnavailable, Toolbox, ToolFailed, tools
from accord.mcp.tools import ServerSpec
from accord.types import AgentSkill, TaskState

SERVERS_VARIABLE = "ACCORD_MCP_SERVERS"
LISTING_WORDS = {"", "tools", "list", "help", "?"}


class BadCall(ValueError):
    """The message names a tool but its arguments cannot be read; the message says why."""


def configured_servers() -> list[str]:
    """The MCP servers `ACCORD_MCP_SERVERS` names."""
    specs = os.environ.get(SERVERS_VARIABLE, "").split(";")
    return [spec.strip() for spec in specs if spec.strip()]


def read_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """The tool a message names and its arguments, or None when it asks for the list (BadCall
    when the arguments are neither `key=value` words nor a JSON object)."""
    name, _, rest = text.strip().partition(" ")
    if name.lower() in LISTING_WORDS:
        return None
    rest = rest.strip()
    if rest.startswith("{"):
        try:
            arguments = json.loads(rest)
        except ValueError as exc:
            raise BadCall(f"the arguments of {name} are not JSON: {exc}") from None
        return name, dict(arguments)  # from `{`: an object or no JSON at all
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise BadCall(f"cannot read the arguments of {name}: {exc}") from None
    arguments = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise BadCall(f"arguments are key=value words or a JSON object, not {word[:40]!r}")
        arguments[key] = _value(value)
    return name, arguments


def _value(text: str) -> Any:
    """A word's value: JSON when it reads as JSON (numbers, true, lists), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def listing(toolbox: Toolbox) -> str:
    if not toolbox:
        return "The MCP servers offer no tools."
    lines = [f"- {name}: {tool.description or 'no description'}" for name, tool in toolbox.items()]
    return "The tools I can call:\n" + "\n".join(lines)


class ToolboxAgent(accord.AgentExecutor):
    """Calls the tool the message names on the MCP servers given (or configured)."""

    def __init__(self, servers: Sequence[ServerSpec] | None = None) -> None:
        self.servers = servers

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        servers = list(self.servers) if self.servers is not None else configured_servers()
        if not servers:
            await task.reject(f"No MCP servers to call: set {SERVERS_VARIABLE}.")
            return
        try:
            call = read_call(context.text)
        except BadCall as exc:
            await task.reject(f"{exc}.")
            return
        await task.start_work("Connecting to the MCP servers")
        try:
            async with tools(*servers) as toolbox:
                if call is None:
                    await task.complete(listing(toolbox))
                    return
                name, arguments = call
                tool = toolbox.get(name)
                if tool is None:
                    known = ", ".join(toolbox) or "none"
                    await task.reject(f"There is no tool {name!r}; the tools are: {known}.")
                    return
                await task.update_status(TaskState.WORKING, f"Calling {name} on {tool.server}")
                parts = await tool(**arguments)
        except (ServerUnavailable, ToolFailed) as exc:
            await task.fail(f"{exc}.")
            return
        await task.add_artifact(parts, name=name)
        await task.complete()


def toolbox_agent(servers: Sequence[ServerSpec] | None = None) -> accord.Agent:
    """The toolbox calling `servers` (by default those of ACCORD_MCP_SERVERS, read anew for
    each request)."""
    return accord.Agent(
        ToolboxAgent(servers),
        name="Toolbox",
        description="Calls the tools of MCP servers by name: the tools of ACCORD_MCP_SERVERS.",
        skills=[
            AgentSkill(
                id="call_tool",
                name="Call an MCP tool",
                description=(
                    "Calls the tool a message names with the arguments it gives (key=value words"
                    " or a JSON object) and returns the tool's text, files and data; 'tools' lists"
                    " them."
                ),
                tags=["mcp", "tools"],
                examples=["tools", "add a=2 b=3", 'search {"query": "A2A"}'],
            )
        ],
        input_modes=["text/plain"],
        output_modes=["text/plain", "application/json", "image/png"],
    )


agent = toolbox_agent()
