"""A PydanticAI `Agent` served as an accord `Agent`: its streamed text as artifact chunks, its
tool calls as status notes, structured output as data, the history kept per context."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import (
    AgentRunResult,
    AgentRunResultEvent,
    AudioUrl,
    BinaryContent,
    DeferredToolRequests,
    DeferredToolResults,
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
from accord.integrations.approvals import answer_of, answers_a_question, approves, may_i_call
from accord.integrations.card import adapted_agent
from accord.integrations.content import InFile, file_part, files_of, prompt_text
from accord.integrations.memory import ContextMemory
from accord.integrations.reply import Reply
from accord.types import DataPart, Part, TextPart

PRINCIPAL = "principal"
"""The key of the run's `metadata` (`RunContext.metadata`) that holds the caller's principal."""


@dataclass(slots=True)
class Conversation:
    """A context's messages so far, and the tool calls its last run left waiting, if any."""

    history: list[ModelMessage] = field(default_factory=list)
    """The messages of the context's finished runs."""
    waiting: DeferredToolRequests | None = None
    waiting_run: list[ModelMessage] = field(default_factory=list)
    """The messages of the run that waits on `waiting`."""


class PydanticAIExecutor(AgentExecutor):
    """Runs a PydanticAI agent for each message, continuing its context's conversation."""

    def __init__(
        self,
        agent: AbstractAgent[Any, Any],
        *,
        deps: Callable[[RequestContext], Any] | None = None,
        memory: ContextMemory[Conversation] | None = None,
    ) -> None:
        self.agent = agent
        self.deps = deps
        self.memory: ContextMemory[Conversation] = memory if memory is not None else ContextMemory()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        reply = Reply(context, events)
        await reply.start()
        async with self.memory.turns.turn(context.context_id):
            output = await self._run(context, reply)
        if isinstance(output, DeferredToolRequests):
            await reply.ask(question(output))
            return
        await answer(reply, output)
        await reply.complete()

    async def _run(self, context: RequestContext, reply: Reply) -> object:
        """Run the agent on the context's conversation, relaying its events; its output."""
        conversation = self.memory.get(context.context_id) or Conversation()
        waiting = conversation.waiting if answers_a_question(context) else None
        history = conversation.waiting_run if waiting else conversation.history
        run = self.agent.run_stream_events(
            None if waiting else user_prompt(context),
            message_history=history or None,
            deferred_tool_results=deferred_results(waiting, context) if waiting else None,
            deps=self.deps(context) if self.deps is not None else None,
            metadata={PRINCIPAL: context.principal},
        )
        output: object = None
        async with run as stream:
            async for event in stream:
                if isinstance(event, AgentRunResultEvent):
                    output = event.result.output
                    self.memory.put(context.context_id, after(conversation, event.result))
                else:
                    await relay(reply, event)
        return output


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


def after(conversation: Conversation, result: AgentRunResult[Any]) -> Conversation:
    """The context's conversation once `result` ended its run: settled, or waiting."""
    if isinstance(result.output, DeferredToolRequests):
        return Conversation(conversation.history, result.output, result.all_messages())
    return Conversation(result.all_messages())


def question(requests: DeferredToolRequests) -> list[Part]:
    """What the caller is asked: to approve the calls that need it, to answer the others."""
    lines = [may_i_call([c.tool_name for c in requests.approvals])] if requests.approvals else []
    lines.extend(f"{call.tool_name} waits for your answer" for call in requests.calls)
    calls = [
        {"id": c.tool_call_id, "tool": c.tool_name, "args": c.args_as_dict()}
        for c in (*requests.approvals, *requests.calls)
    ]
    return [TextPart(text="\n".join(lines)), DataPart(data={"calls": calls})]


def deferred_results(waiting: DeferredToolRequests, context: RequestContext) -> DeferredToolResults:
    """The caller's reply as the results of the calls the run left waiting: every approval
    granted or denied, every other call answered with the reply's value."""
    approved = approves(context.message)
    value = answer_of(context.message)
    return DeferredToolResults(
        approvals={call.tool_call_id: approved for call in waiting.approvals},
        calls={call.tool_call_id: value for call in waiting.calls},
    )


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
    memory: ContextMemory[Conversation] | None = None,
    **card: Any,
) -> Agent:
    """An accord `Agent` running the PydanticAI `agent`.

    Each message runs the agent once, with the history of the messages before it in the same
    context (`memory`: in this process, the least recently used contexts forgotten past a
    thousand). `deps` makes the run's dependencies from the request; the caller's principal
    is in the run's metadata (`ctx.metadata["principal"]` in a tool). When the run ends with
    `DeferredToolRequests` (a tool that needs approval, or one called outside the run) the
    task is `input-required`; the reply in the same task approves ("yes", or data
    `{"approved": true}`) or denies the calls, and answers the others with its value. The
    card has the agent's name and description and its function tools as skills; `card` (any
    argument of `Agent`) says more or otherwise.
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
