"""A PydanticAI `Agent` served as an accord `Agent`: its streamed text as artifact chunks, its
tool calls as status notes, structured output as data, the history kept per context."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic_ai import (
    AgentRunResultEvent,
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    FunctionToolCallEvent,
    ImageUrl,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPartDelta,
    VideoUrl,
)
from pydantic_ai import FilePart as ModelFile
from pydantic_ai import TextPart as ModelText
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.messages import ModelMessage, UserContent
from pydantic_ai.toolsets import FunctionToolset

from accord.agents import Agent, AgentExecutor, EventSink, RequestContext
from accord.integrations.card import adapted_agent
from accord.integrations.content import InFile, file_part, files_of, prompt_text
from accord.integrations.memory import ContextMemory
from accord.integrations.reply import Reply

PRINCIPAL = "principal"
"""The key of the run's `metadata` (`RunContext.metadata`) that holds the caller's principal."""

History = list[ModelMessage]


class PydanticAIExecutor(AgentExecutor):
    """Runs a PydanticAI agent for each message, continuing its context's conversation."""

    def __init__(
        self,
        agent: AbstractAgent[Any, Any],
        *,
        deps: Callable[[RequestContext], Any] | None = None,
        memory: ContextMemory[History] | None = None,
    ) -> None:
        self.agent = agent
        self.deps = deps
        self.memory: ContextMemory[History] = memory if memory is not None else ContextMemory()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        reply = Reply(context, events)
        await reply.start()
        run = self.agent.run_stream_events(
            user_prompt(context),
            message_history=self.memory.get(context.context_id),
            deps=self.deps(context) if self.deps is not None else None,
            metadata={PRINCIPAL: context.principal},
        )
        async with run as stream:
            async for event in stream:
                if isinstance(event, AgentRunResultEvent):
                    self.memory.put(context.context_id, event.result.all_messages())
                    await answer(reply, event.result.output)
                else:
                    await relay(reply, event)
        await reply.complete()


async def relay(reply: Reply, event: object) -> None:
    """One event of the run, as the caller sees it."""
    if isinstance(event, PartStartEvent) and isinstance(event.part, ModelText):
        reply.end_text()
        await reply.text_chunk(event.part.content)
    elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        await reply.text_chunk(event.delta.content_delta)
    elif isinstance(event, PartEndEvent) and isinstance(event.part, ModelFile):
        content = event.part.content
        await reply.artifact(file_part(content.data, content.media_type))
    elif isinstance(event, FunctionToolCallEvent):
        call = event.part
        await reply.note(
            f"calling {call.tool_name}", {"tool": call.tool_name, "args": call.args_as_dict()}
        )


async def answer(reply: Reply, output: object) -> None:
    """The run's output: text (what the stream did not send of it), files, or data."""
    if isinstance(output, str):
        await reply.text(output)
    elif isinstance(output, BinaryContent):
        await reply.artifact(file_part(output.data, output.media_type))
    elif output is not None:
        await reply.data(output)


def user_prompt(context: RequestContext) -> str | Sequence[UserContent]:
    """The caller's message as PydanticAI's user prompt: its text, then its files."""
    text = prompt_text(context.message)
    files = [model_file(file) for file in files_of(context.message)]
    return [text, *files] if files else text


def model_file(file: InFile) -> UserContent:
    """A file the caller sent, as the model's content: bytes as they are, a URI by its kind."""
    if file.data is not None:
        return BinaryContent(file.data, media_type=file.media_type)
    kind, _, _ = file.media_type.partition("/")
    if kind == "image":
        return ImageUrl(file.url, media_type=file.media_type)
    if kind == "audio":
        return AudioUrl(file.url, media_type=file.media_type)
    if kind == "video":
        return VideoUrl(file.url, media_type=file.media_type)
    return DocumentUrl(file.url, media_type=file.media_type)


def as_agent(
    agent: AbstractAgent[Any, Any],
    *,
    name: str | None = None,
    description: str | None = None,
    deps: Callable[[RequestContext], Any] | None = None,
    memory: ContextMemory[History] | None = None,
    **card: Any,
) -> Agent:
    """An accord `Agent` running the PydanticAI `agent`.

    Each message runs the agent once, with the history of the messages before it in the same
    context (`memory`: in this process, the least recently used contexts forgotten past a
    thousand). `deps` makes the run's dependencies from the request; the caller's principal
    is in the run's metadata (`ctx.metadata["principal"]` in a tool). The card has the agent's
    name and description and its function tools as skills; `card` (any argument of `Agent`)
    says more or otherwise.
    """
    executor = PydanticAIExecutor(agent, deps=deps, memory=memory)
    tools = [
        (tool.name, tool.description)
        for toolset in agent.toolsets
        if isinstance(toolset, FunctionToolset)
        for tool in toolset.tools.values()
    ]
    return adapted_agent(
        executor,
        name=name or agent.name or "PydanticAI agent",
        description=description or agent.description,
        tools=tools,
        **card,
    )
