"""An OpenAI Agents SDK `Agent` served as an accord `Agent`: run with `Runner.run_streamed`, its
text deltas as artifact chunks, tool calls and handoffs as status notes, a tool call that
needs approval as `input-required`, the conversation kept per context."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents import (
    Agent as SdkAgent,
)
from agents import (
    AgentUpdatedStreamEvent,
    FunctionTool,
    RawResponsesStreamEvent,
    RunConfig,
    RunItemStreamEvent,
    Runner,
    RunResultStreaming,
    RunState,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    ToolOutputFileContent,
    ToolOutputImage,
    TResponseInputItem,
)
from openai.types.responses import ResponseTextDeltaEvent

from accord.agents import Agent, AgentExecutor, EventSink, RequestContext
from accord.integrations.approvals import answers_a_question, approves, may_i_call
from accord.integrations.card import adapted_agent
from accord.integrations.content import InFile, file_part, files_of, prompt_text, uri_part
from accord.integrations.memory import ContextMemory
from accord.integrations.reply import Reply
from accord.types import DataPart, Part, TextPart


@dataclass(slots=True)
class Conversation:
    """A context's turns so far, and the run that waits for approvals, if one does."""

    history: list[TResponseInputItem] = field(default_factory=list)
    waiting: RunResultStreaming | None = None


class OpenAIAgentsExecutor(AgentExecutor):
    """Runs the SDK agent for each message, continuing its context's conversation."""

    def __init__(
        self,
        agent: SdkAgent[Any],
        *,
        run_context: Callable[[RequestContext], Any] | None = None,
        run_config: RunConfig | None = None,
        memory: ContextMemory[Conversation] | None = None,
    ) -> None:
        self.agent = agent
        self.run_context = run_context or (lambda context: context.principal)
        self.run_config = run_config
        self.memory: ContextMemory[Conversation] = memory if memory is not None else ContextMemory()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        reply = Reply(context, events)
        await reply.start()
        async with self.memory.turns.turn(context.context_id):
            result = await self._run(context, reply)
        if result.interruptions:
            await reply.ask(approval_question(result.interruptions))
            return
        if isinstance(result.final_output, str):
            await reply.text(result.final_output)
        elif result.final_output is not None:
            await reply.data(result.final_output)
        await reply.complete()

    async def _run(self, context: RequestContext, reply: Reply) -> RunResultStreaming:
        """Run the agent on the context's conversation, relaying its events; what it left."""
        conversation = self.memory.get(context.context_id) or Conversation()
        run_input: list[TResponseInputItem] | RunState[Any]
        if conversation.waiting is not None and answers_a_question(context):
            run_input = answered(conversation.waiting, context)
        else:
            run_input = [*conversation.history, user_item(context)]
        result = Runner.run_streamed(
            self.agent, run_input, context=self.run_context(context), run_config=self.run_config
        )
        run = Run(reply, result.current_agent)
        try:
            async for event in result.stream_events():
                await run.follow(event)
        finally:
            if not result.is_complete:
                result.cancel()
        if result.interruptions:
            self.memory.put(context.context_id, Conversation(conversation.history, result))
        else:
            self.memory.put(context.context_id, Conversation(result.to_input_list()))
        return result


class Run:
    """What one run has shown the caller, and which agent answers now."""

    def __init__(self, reply: Reply, agent: SdkAgent[Any]) -> None:
        self.reply = reply
        self.agent = agent

    async def follow(self, event: object) -> None:
        """One event of the run, as the caller sees it."""
        reply = self.reply
        if isinstance(event, RawResponsesStreamEvent):
            if isinstance(event.data, ResponseTextDeltaEvent):
                await reply.text_chunk(event.data.delta)
        elif isinstance(event, AgentUpdatedStreamEvent) and event.new_agent is not self.agent:
            self.agent = event.new_agent
            reply.end_text()
            await reply.note(f"handed off to {self.agent.name}", {"agent": self.agent.name})
        elif isinstance(event, RunItemStreamEvent):
            item = event.item
            if isinstance(item, ToolCallItem) and item.tool_name:
                args = arguments(getattr(item.raw_item, "arguments", None))
                await reply.note(
                    f"calling {item.tool_name}", {"tool": item.tool_name, "args": args}
                )
            elif isinstance(item, ToolCallOutputItem):
                for file in output_files(item.output):
                    await reply.artifact(file)


def arguments(raw: object) -> object:
    """A tool call's arguments: the JSON object the model wrote, read when it reads."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def output_files(output: object) -> list[Part]:
    """The images and files a tool returned."""
    found: list[Part] = []
    for piece in output if isinstance(output, list) else [output]:
        if isinstance(piece, ToolOutputImage) and piece.image_url:
            found.append(url_file(piece.image_url, None))
        elif isinstance(piece, ToolOutputFileContent):
            if piece.file_data:
                found.append(url_file(piece.file_data, piece.filename))
            elif piece.file_url:
                found.append(uri_part(piece.file_url, None, piece.filename))
    return found


def url_file(url: str, name: str | None) -> Part:
    """A file given as a `data:` URL (inline) or any other URL (by reference)."""
    header, comma, encoded = url.partition(",")
    if url.startswith("data:") and comma and header.endswith(";base64"):
        try:
            data = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            return uri_part(url, None, name)
        return file_part(data, header.removeprefix("data:").removesuffix(";base64"), name)
    return uri_part(url, None, name)


def user_item(context: RequestContext) -> TResponseInputItem:
    """The caller's message as the SDK's input: its text, then its images and files."""
    content: list[Any] = [{"type": "input_text", "text": prompt_text(context.message)}]
    content.extend(input_file(file) for file in files_of(context.message))
    item: TResponseInputItem = {"role": "user", "content": content}
    return item


def input_file(file: InFile) -> dict[str, Any]:
    if file.media_type.startswith("image/"):
        return {"type": "input_image", "image_url": file.url, "detail": "auto"}
    if file.data is None:
        return {"type": "input_file", "file_url": file.url}
    return {"type": "input_file", "file_data": file.url, "filename": file.name or "file"}


def approval_question(interruptions: list[ToolApprovalItem]) -> list[Part]:
    """What the caller is asked: may these tools be called with these arguments?"""
    calls = [{"tool": i.name, "args": i.arguments} for i in interruptions]
    question = may_i_call([str(call["tool"]) for call in calls])
    return [TextPart(text=question), DataPart(data={"calls": calls})]


def answered(waiting: RunResultStreaming, context: RequestContext) -> RunState[Any]:
    """The waiting run's state with the caller's answer: every call approved, or declined."""
    approved = approves(context.message)
    state = waiting.to_state()
    for interruption in waiting.interruptions:
        if approved:
            state.approve(interruption)
        else:
            state.reject(interruption)
    return state


def as_agent(
    agent: SdkAgent[Any],
    *,
    name: str | None = None,
    description: str | None = None,
    run_context: Callable[[RequestContext], Any] | None = None,
    run_config: RunConfig | None = None,
    memory: ContextMemory[Conversation] | None = None,
    **card: Any,
) -> Agent:
    """An accord `Agent` running the OpenAI Agents SDK `agent` with `Runner.run_streamed`.

    Each message continues the conversation of its context (`memory`: in this process, the
    least recently used contexts forgotten past a thousand). The run's context (what tools
    see as `ctx.context`) is the caller's principal, or what `run_context` makes from the
    request. A tool that needs approval makes the task `input-required`: "yes" (or data
    `{"approved": true}`) in the same task approves the calls, anything else declines them.
    The card has the agent's name, its `handoff_description` and its function tools as
    skills; `card` (any argument of `Agent`) says more or otherwise.
    """
    executor = OpenAIAgentsExecutor(
        agent, run_context=run_context, run_config=run_config, memory=memory
    )
    tools = [(t.name, t.description) for t in agent.tools if isinstance(t, FunctionTool)]
    return adapted_agent(
        executor,
        name=name or agent.name,
        description=description or agent.handoff_description,
        tools=tools,
        **card,
    )
