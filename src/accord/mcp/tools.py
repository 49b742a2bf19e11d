"""`tools(...)`: the tools of MCP servers (stdio or streamable HTTP) for an accord agent, each
an async callable whose result is A2A parts."""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent, Tool

from accord.mcp.tool_parts import result_parts
from accord.types import Part

ServerSpec = str | Sequence[str] | StdioServerParameters
"""An MCP server: an `http(s)://` URL (streamable HTTP), or a command that serves MCP on its
stdin and stdout (a command line, or its words as a list, or the SDK's parameters)."""

DEFAULT_TIMEOUT = 60.0
MAX_PAGES = 100


class ToolFailed(Exception):
    """An MCP tool answered with an error; the message is what it said."""


class ServerUnavailable(Exception):
    """An MCP server could not be started, reached or listed; the message names it."""


@dataclass(frozen=True)
class McpTool:
    """One tool of an MCP server: `await tool(**arguments)` calls it.

    The result is A2A parts (text, files, structured content as a data part), ready to be
    sent by an agent; a result the server marks as an error raises ToolFailed.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    server: str
    _client: Client = field(repr=False, compare=False)

    async def call(self, arguments: Mapping[str, Any] | None = None) -> CallToolResult:
        """The tool's MCP result as it came, errors included."""
        return await self._client.call_tool(self.name, dict(arguments or {}))

    async def __call__(self, **arguments: Any) -> list[Part]:
        result = await self.call(arguments)
        if result.is_error:
            said = " ".join(b.text for b in result.content if isinstance(b, TextContent))
            raise ToolFailed(f"the tool {self.name} of {self.server} failed: {said or 'no reason'}")
        return result_parts(result)


class Toolbox(Mapping[str, McpTool]):
    """The tools of one or more MCP servers, by name."""

    def __init__(self, tools: Sequence[McpTool]) -> None:
        self._tools: dict[str, McpTool] = {}
        for tool in tools:
            other = self._tools.get(tool.name)
            if other is not None:
                raise ValueError(f"both {other.server} and {tool.server} have a tool {tool.name}")
            self._tools[tool.name] = tool

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def __getitem__(self, name: str) -> McpTool:
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)


@asynccontextmanager
async def tools(
    *servers: ServerSpec, read_timeout: float = DEFAULT_TIMEOUT
) -> AsyncIterator[Toolbox]:
    """Connect to the MCP `servers` and yield their tools, disconnecting on leaving.

    Commands are started for the time of the block. Two servers with a tool of the same name
    are a ValueError; a server that cannot be started, reached or listed a ServerUnavailable.
    `read_timeout` bounds each answer of a server, in seconds.
    """
    try:
        async with AsyncExitStack() as stack:
            found: list[McpTool] = []
            for spec in servers:
                client, label = await _connected(stack, spec, read_timeout)
                found += [
                    McpTool(t.name, t.description or "", t.input_schema, label, client)
                    for t in await _listed(client, label)
                ]
            yield Toolbox(found)
    except BaseExceptionGroup as group:  # the SDK's task groups wrap what the block raised
        raise _only(group) or group from None


async def _connected(
    stack: AsyncExitStack, spec: ServerSpec, read_timeout: float
) -> tuple[Client, str]:
    """The SDK's client of the server, connected, and the server's name."""
    server, label = _server(spec)
    try:
        client = Client(server, read_timeout_seconds=read_timeout)
        return await stack.enter_async_context(client), label
    except Exception as exc:  # the SDK's transports fail in ways of their own
        raise ServerUnavailable(f"the MCP server {label}: {_reason(exc)}") from exc


def _server(spec: ServerSpec) -> tuple[str | StdioServerParameters, str]:
    """What the SDK's client connects to, and how to name it."""
    if isinstance(spec, StdioServerParameters):
        return spec, shlex.join([spec.command, *spec.args])
    if isinstance(spec, str) and spec.startswith(("http://", "https://")):
        return spec, spec
    words = shlex.split(spec) if isinstance(spec, str) else list(spec)
    if not words:
        raise ValueError("an MCP server is a URL or a command, not nothing")
    return StdioServerParameters(command=words[0], args=words[1:]), shlex.join(words)


async def _listed(client: Client, label: str) -> list[Tool]:
    """Every tool, page by page (at most MAX_PAGES: a cursor going round in circles ends)."""
    listed: list[Tool] = []
    cursor: str | None = None
    try:
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            listed += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
    except Exception as exc:
        raise ServerUnavailable(f"the MCP server {label} lists no tools: {_reason(exc)}") from exc
    return listed


def _only(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception inside `group` and the groups it holds, if there is only one."""
    found = group.exceptions
    if len(found) != 1:
        return None
    inner = found[0]
    return _only(inner) if isinstance(inner, BaseExceptionGroup) else inner


def _reason(exc: BaseException) -> str:
    """The first reason inside `exc` (the SDK's task groups wrap them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__
