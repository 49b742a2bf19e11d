"""AgentBridge: A2A agents offered as one MCP server — their skills as tools, their cards as
resources, their streamed updates as progress notifications."""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListResourcesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    TextContent,
    TextResourceContents,
    Tool,
)

import accord
from accord.client import Client, Credentials
from accord.client.card_resolver import card_urls
from accord.errors import A2AClientError, A2AError
from accord.mcp.agent_results import progress_note, tool_result
from accord.mcp.tool_specs import BadArguments, ToolArguments, agent_tools
from accord.types import (
    AgentCard,
    DataPart,
    FilePart,
    FileWithBytes,
    Message,
    Part,
    Task,
)

logger = logging.getLogger(__name__)

CARD_MEDIA_TYPE = "application/json"
CANCEL_WAIT = 10.0
"""How long a call given up waits for the agent to cancel its task, in seconds."""


class AgentBridge:
    """A2A agents, each through accord's `Client`, as the tools and resources of an MCP server.

    Make one with `AgentBridge.connect(urls)` (the agents' cards are read then); `server()` is
    the MCP server to run over stdio or streamable HTTP (`accord.mcp.serving`).
    """

    def __init__(self, clients: Sequence[Client], cards: Sequence[AgentCard]) -> None:
        self._clients = list(clients)
        self.cards = list(cards)
        self.tools = agent_tools(self.cards)
        self._tools = {tool.name: tool for tool in self.tools}
        self._card_uris = {card_urls(client.url)[0]: i for i, client in enumerate(self._clients)}

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        urls: Sequence[str],
        *,
        credentials: Credentials | None = None,
        transport: str | None = None,
        version: str | None = None,
    ) -> AsyncIterator[AgentBridge]:
        """A bridge to the agents at `urls`, their cards read (A2AClientError naming the one
        that cannot be reached), their clients closed on leaving."""
        async with AsyncExitStack() as stack:
            clients = [
                await stack.enter_async_context(
                    Client(url, credentials=credentials, transport=transport, version=version)
                )
                for url in urls
            ]
            cards = [await client.get_card() for client in clients]
            yield cls(clients, cards)

    def server(self) -> Server[Any]:
        """The MCP server offering the agents (the low-level one: tools come from the cards)."""
        names = ", ".join(card.name for card in self.cards)
        return Server(
            "accord-a2a-bridge",
            version=accord.__version__,
            instructions=f"The tools are skills of A2A agents ({names}); an agent may answer"
            " with a question, to be answered by calling the same tool with its taskId.",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_read_resource=self.read_resource,
        )

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        tools = [
            Tool(name=t.name, description=t.description, input_schema=t.input_schema())
            for t in self.tools
        ]
        return ListToolsResult(tools=tools)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        tool = self._tools.get(params.name)
        if tool is None:
            raise MCPError(INVALID_PARAMS, f"no tool named {params.name!r}")
        try:
            arguments = tool.read_arguments(params.arguments)
            parts = _parts(arguments)
        except BadArguments as exc:
            return _failed(str(exc))
        client = self._clients[tool.agent]
        try:
            if tool.card.capabilities.streaming:
                answer = await _follow(client, arguments, parts, ctx)
            else:
                answer = await client.send(
                    arguments.message,
                    parts=parts,
                    task_id=arguments.task_id,
                    context_id=arguments.context_id,
                )
        except (A2AError, A2AClientError) as exc:
            return _failed(f"the agent {tool.card.name} could not answer: {exc}")
        return tool_result(answer)

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        resources = [
            Resource(
                uri=uri,
                name=self.cards[index].name,
                description=f"The A2A agent card of {self.cards[index].name}.",
                mime_type=CARD_MEDIA_TYPE,
            )
            for uri, index in self._card_uris.items()
        ]
        return ListResourcesResult(resources=resources)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        index = self._card_uris.get(params.uri)
        if index is None:
            raise MCPError(INVALID_PARAMS, f"no resource {params.uri!r}: cards are listed")
        text = json.dumps(self.cards[index].to_wire(), indent=2, ensure_ascii=False)
        contents = TextResourceContents(uri=params.uri, mime_type=CARD_MEDIA_TYPE, text=text)
        return ReadResourceResult(contents=[contents])


async def _follow(
    client: Client, arguments: ToolArguments, parts: list[Part], ctx: ServerRequestContext[Any]
) -> Task | Message:
    """Stream the message, each event a progress notification; the task as it ends up.

    Should the MCP call be cancelled, the agent's task is cancelled too.
    """
    task_id: str | None = None
    count = 0
    try:
        stream = client.stream(
            arguments.message,
            parts=parts,
            task_id=arguments.task_id,
            context_id=arguments.context_id,
        )
        async with stream:
            async for event in stream:
                if isinstance(event, Message):
                    return event
                task_id = event.id if isinstance(event, Task) else event.task_id
                count += 1
                await ctx.session.report_progress(count, message=progress_note(event))
    except anyio.get_cancelled_exc_class():
        if task_id is not None:
            with anyio.move_on_after(CANCEL_WAIT, shield=True):
                await _cancel_quietly(client, task_id)
        raise
    if task_id is None:
        raise A2AClientError("the agent's stream ended without an answer")
    return await client.get_task(task_id, history_length=0)


async def _cancel_quietly(client: Client, task_id: str) -> None:
    try:
        await client.cancel_task(task_id)
    except (A2AError, A2AClientError) as exc:  # it may have ended meanwhile
        logger.info("could not cancel task %s: %s", task_id, exc)


def _parts(arguments: ToolArguments) -> list[Part]:
    """The parts after the message's text: the data, then the files (BadArguments for a file
    that is not base64)."""
    parts: list[Part] = [DataPart(data=arguments.data)] if arguments.data is not None else []
    for number, given in enumerate(arguments.files or ()):
        try:
            base64.b64decode(given.data, validate=True)
        except binascii.Error:
            raise BadArguments(f"bad arguments: files.{number}.data is not base64") from None
        file = FileWithBytes(bytes=given.data, mime_type=given.mime_type, name=given.name)
        parts.append(FilePart(file=file))
    return parts


def _failed(reason: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=reason)], is_error=True)
