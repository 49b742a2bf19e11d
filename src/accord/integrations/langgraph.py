"""A compiled LangGraph graph served as an accord `Agent`: one thread per A2A context, its
streamed messages as artifacts, its steps as status notes, an `interrupt()` as
`input-required` answered by `Command(resume=...)`."""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt, StreamMode

from accord.agents import Agent, AgentExecutor, EventSink, RequestContext
from accord.integrations.approvals import answer_of, answers_a_question
from accord.integrations.card import adapted_agent
from accord.integrations.content import (
    InFile,
    data_part,
    file_part,
    files_of,
    prompt_text,
    uri_part,
)
from accord.integrations.reply import Reply
from accord.integrations.turns import ContextTurns
from accord.types import Part, TextPart

PRINCIPAL = "principal"
"""The key of the run's `configurable` config that holds the caller's principal."""
STREAM_MODES: list[StreamMode] = ["messages", "updates", "custom"]
"""What the adapter follows of a run: messages (tokens and whole ones), steps, custom data."""


class LangGraphExecutor(AgentExecutor):
    """Runs the graph on the context's thread: a new input, or the answer to its interrupt."""

    def __init__(
        self,
        graph: Pregel[Any, Any, Any, Any],
        *,
        graph_input: Callable[[RequestContext], Any] | None = None,
        run_context: Callable[[RequestContext], Any] | None = None,
    ) -> None:
        self.graph = graph
        self.graph_input = graph_input or messages_input
        self.run_context = run_context
        self.turns = ContextTurns()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        config: RunnableConfig = {
            "configurable": {"thread_id": context.context_id, PRINCIPAL: context.principal}
        }
        reply = Reply(context, events)
        await reply.start()
        async with self.turns.turn(context.context_id):  # one run at a time on a thread
            await self._run(context, config, reply)

    async def _run(self, context: RequestContext, config: RunnableConfig, reply: Reply) -> None:
        """Run the graph on the thread: a new input, or the answer to its interrupt."""
        answering = answers_a_question(context)
        waiting = (await self.graph.aget_state(config)).interrupts if answering else ()
        run = Run(reply)
        async for part in self.graph.astream(
            resume(waiting, context) if waiting else self.graph_input(context),
            config,
            context=self.run_context(context) if self.run_context is not None else None,
            stream_mode=STREAM_MODES,
            version="v2",
        ):
            await run.follow(part["type"], part["data"])
        if run.interrupts:
            await reply.ask(asked(run.interrupts))
            return
        if not reply.sent_anything:
            values = (await self.graph.aget_state(config)).values
            if values:
                await reply.data(values)
        await reply.complete()


class Run:
    """What one run of the graph has shown the caller, and the interrupts it ended with."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.streaming: str | None = None
        self.shown: set[str] = set()
        self.interrupts: tuple[Interrupt, ...] = ()

    async def follow(self, mode: str, data: Any) -> None:
        if mode == "messages":
            message, _ = data
            await self.message(message)
        elif mode == "custom":
            await self.reply.note(data if isinstance(data, str) else "update", _data(data))
        elif mode == "updates":
            for node, update in data.items():
                if node == "__interrupt__":
                    self.interrupts += tuple(update)
                elif not node.startswith("__"):
                    await self.reply.note(f"step {node}", {"node": node})

    async def message(self, message: BaseMessage) -> None:
        """An AI message: token chunks streamed, a whole message sent once, with its files."""
        if not isinstance(message, AIMessage) or (message.id and message.id in self.shown):
            return
        if isinstance(message, AIMessageChunk):
            if message.id != self.streaming:
                self.reply.end_text()
                self.streaming = message.id
            await self.reply.text_chunk(message.text)
            return
        if message.id:
            self.shown.add(message.id)
        if message.id is None or message.id != self.streaming:
            self.reply.end_text()
            await self.reply.text(message.text)
        for call in message.tool_calls:
            await self.reply.note(
                f"calling {call['name']}", {"tool": call["name"], "args": call["args"]}
            )
        for file in message_files(message):
            await self.reply.artifact(file)


def _data(value: object) -> dict[str, Any] | None:
    return None if isinstance(value, str) else data_part(value).data


def message_files(message: BaseMessage) -> list[Part]:
    """The images, audio, video and files of a message's standard content blocks."""
    found: list[Part] = []
    for block in message.content_blocks:
        if block["type"] not in ("image", "audio", "video", "file"):
            continue
        media_type = block.get("mime_type")
        if "base64" in block:
            found.append(file_part(base64.b64decode(block["base64"]), media_type))
        elif "url" in block:
            found.append(uri_part(block["url"], media_type))
    return found


def messages_input(context: RequestContext) -> dict[str, Any]:
    """The default input: the caller's message added to the graph's `messages`."""
    files = files_of(context.message)
    text = prompt_text(context.message)
    if not files:
        return {"messages": [HumanMessage(content=text)]}
    blocks: list[str | dict[str, Any]] = [{"type": "text", "text": text}]
    blocks.extend(content_block(file) for file in files)
    return {"messages": [HumanMessage(content=blocks)]}


def content_block(file: InFile) -> dict[str, Any]:
    """A file as a standard content block: image, audio, video or file, inline or by URL."""
    kind, _, _ = file.media_type.partition("/")
    block: dict[str, Any] = {
        "type": kind if kind in ("image", "audio", "video") else "file",
        "mime_type": file.media_type,
    }
    if file.data is not None:
        block["base64"] = base64.b64encode(file.data).decode("ascii")
    else:
        block["url"] = file.url
    return block


def resume(waiting: Sequence[Interrupt], context: RequestContext) -> Command[Any]:
    """The caller's answer to the interrupts the thread waits on: its data when it sent only
    data, else its text (the same answer to each of several interrupts)."""
    answer = answer_of(context.message)
    if len(waiting) == 1:
        return Command(resume=answer)
    return Command(resume={interrupt.id: answer for interrupt in waiting})


def asked(interrupts: Sequence[Interrupt]) -> list[Part]:
    """What the graph asks the caller: each interrupt's value, text as it is, else as data."""
    return [
        TextPart(text=i.value) if isinstance(i.value, str) else data_part(i.value)
        for i in interrupts
    ]


def as_agent(
    graph: Pregel[Any, Any, Any, Any],
    *,
    name: str | None = None,
    description: str | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    graph_input: Callable[[RequestContext], Any] | None = None,
    run_context: Callable[[RequestContext], Any] | None = None,
    **card: Any,
) -> Agent:
    """An accord `Agent` running the compiled LangGraph `graph`.

    Each A2A context is a thread of the graph (its `thread_id`), kept by `checkpointer`: the
    graph's own when it was compiled with one, else the one given, else an `InMemorySaver`.
    A message starts a run with `graph_input(context)` (by default the message added to
    `messages`), or, when the thread waits on an `interrupt()`, resumes it with the answer.
    The caller's principal is in the run's config (`config["configurable"]["principal"]`);
    `run_context` makes the run's `context` (`Runtime.context`) from the request. The card has
    the graph's name and the tools of its `ToolNode`s as skills; `card` (any argument of
    `Agent`) says more or otherwise.
    """
    if graph.checkpointer is None or checkpointer is not None:
        graph = graph.copy(update={"checkpointer": checkpointer or InMemorySaver()})
    tools = [
        (tool.name, tool.description)
        for node in graph.nodes.values()
        if isinstance(node.bound, ToolNode)
        for tool in node.bound.tools_by_name.values()
    ]
    executor = LangGraphExecutor(graph, graph_input=graph_input, run_context=run_context)
    return adapted_agent(
        executor, name=name or graph.get_name(), description=description, tools=tools, **card
    )
