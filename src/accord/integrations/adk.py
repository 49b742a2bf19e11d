"""A Google ADK agent served as an accord `Agent`: run by its `Runner` in a session per A2A
context, its events as A2A events, a long-running tool or a request for input as
`input-required` answered with the function's response."""

from __future__ import annotations

from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

from google.adk.agents import BaseAgent, RunConfig
from google.adk.agents.run_config import StreamingMode  # type: ignore[attr-defined]
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, InMemorySessionService, Session
from google.adk.tools.base_tool import BaseTool
from google.genai import types

from accord.agents import Agent, AgentExecutor, EventSink, RequestContext
from accord.integrations.approvals import answer_of, answers_a_question, approves, may_i_call
from accord.integrations.card import adapted_agent
from accord.integrations.content import file_part, files_of, prompt_text, uri_part
from accord.integrations.reply import Reply
from accord.integrations.turns import ContextTurns
from accord.types import DataPart, Part, TextPart

PRINCIPAL = "principal"
"""The session state key that holds who the caller is (`id`, `scheme`, `scopes`)."""
REQUEST_INPUT = "adk_request_input"
REQUEST_CONFIRMATION = "adk_request_confirmation"


class ADKFailure(RuntimeError):
    """The agent ended its run with an error event."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A function call the agent waits on: a long-running tool or a request for input."""

    id: str
    name: str
    args: dict[str, Any]


class ADKExecutor(AgentExecutor):
    """Runs the agent in the session of the message's context, as the caller's user id."""

    def __init__(self, runner: Runner, *, run_config: RunConfig | None = None) -> None:
        self.runner = runner
        self.run_config = run_config or RunConfig(streaming_mode=StreamingMode.SSE)
        self.turns = ContextTurns()

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        reply = Reply(context, events)
        await reply.start()
        async with self.turns.turn(context.context_id):  # one run at a time in a session
            await self._run(context, reply)

    async def _run(self, context: RequestContext, reply: Reply) -> None:
        """Run the agent in the context's session: a new message, or the answer it waits on."""
        answering = answers_a_question(context)
        user_id = context.principal.id
        session = await self.session(user_id, context.context_id)
        waiting = pending(session.events) if answering else []
        run = Run(reply, self.runner.agent.name)
        principal = context.principal
        stream = self.runner.run_async(
            user_id=user_id,
            session_id=session.id,
            new_message=answer(waiting, context) if waiting else user_content(context),
            state_delta={
                PRINCIPAL: {
                    "id": principal.id,
                    "scheme": principal.scheme,
                    "scopes": sorted(principal.scopes),
                }
            },
            run_config=self.run_config,
        )
        async with aclosing(stream):
            async for event in stream:
                await run.follow(event)
        if run.asked:
            await reply.ask(question(run.asked))
            return
        await reply.complete()

    async def session(self, user_id: str, session_id: str) -> Session:
        """The context's session, made on its first message."""
        service: BaseSessionService = self.runner.session_service
        app = self.runner.app_name
        found = await service.get_session(app_name=app, user_id=user_id, session_id=session_id)
        if found is None:
            found = await service.create_session(
                app_name=app, user_id=user_id, session_id=session_id
            )
        return found


class Run:
    """What one run has shown the caller, and the calls it ended waiting on."""

    def __init__(self, reply: Reply, author: str) -> None:
        self.reply = reply
        self.author = author
        self.asked: list[Pending] = []

    async def follow(self, event: Event) -> None:
        if event.error_code:
            raise ADKFailure(f"{event.error_code}: {event.error_message}")
        reply = self.reply
        if event.author not in ("user", self.author) and event.content:
            self.author = event.author
            reply.end_text()
            await reply.note(f"{event.author} takes over", {"agent": event.author})
        parts = event.content.parts if event.content and event.content.parts else []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        if event.partial:
            await reply.text_chunk(text)
            return
        if text:
            await reply.text(text)
            reply.end_text()
        waits_on = set(event.long_running_tool_ids or ())
        for call in event.get_function_calls():
            name, args = call.name or "", dict(call.args or {})
            if call.id in waits_on or name == REQUEST_INPUT:
                self.asked.append(Pending(call.id or "", name, args))
            else:
                await reply.note(f"calling {name}", {"tool": name, "args": args})
        for part in parts:
            if part.inline_data and part.inline_data.data is not None:
                blob = part.inline_data
                await reply.artifact(file_part(blob.data or b"", blob.mime_type, blob.display_name))
            elif part.file_data and part.file_data.file_uri:
                data = part.file_data
                await reply.artifact(
                    uri_part(data.file_uri or "", data.mime_type, data.display_name)
                )


def pending(events: list[Event]) -> list[Pending]:
    """The calls of the session the agent still waits on: long-running or asking for input,
    with no response from the user after them."""
    waiting: dict[str, Pending] = {}
    for event in events:
        if event.author == "user":
            for response in event.get_function_responses():
                waiting.pop(response.id or "", None)
            continue
        long_running = set(event.long_running_tool_ids or ())
        for call in event.get_function_calls():
            if call.id and (call.id in long_running or call.name == REQUEST_INPUT):
                waiting[call.id] = Pending(call.id, call.name or "", dict(call.args or {}))
    return list(waiting.values())


def question(asked: list[Pending]) -> list[Part]:
    """What the caller is asked: the request's message, the confirmation's hint, or which
    function waits, with the calls as data."""
    lines = []
    for call in asked:
        if call.name == REQUEST_INPUT:
            lines.append(str(call.args.get("message") or "Input requested"))
        elif call.name == REQUEST_CONFIRMATION:
            confirmation = call.args.get("toolConfirmation") or {}
            original = (call.args.get("originalFunctionCall") or {}).get("name", "the tool")
            hint = confirmation.get("hint")
            lines.append(f"{hint} (yes or no)" if hint else may_i_call([str(original)]))
        else:
            lines.append(f"{call.name} waits for your answer")
    calls = [{"id": c.id, "name": c.name, "args": c.args} for c in asked]
    return [TextPart(text="\n".join(lines)), DataPart(data={"calls": calls})]


def answer(waiting: list[Pending], context: RequestContext) -> types.Content:
    """The caller's message as the response of each call the agent waits on."""
    value = answer_of(context.message)
    responses = []
    for call in waiting:
        response: dict[str, Any]
        if call.name == REQUEST_CONFIRMATION:
            response = {"confirmed": approves(context.message)}
        else:
            response = value if isinstance(value, dict) else {"result": value}
        function_response = types.FunctionResponse(id=call.id, name=call.name, response=response)
        responses.append(types.Part(function_response=function_response))
    return types.Content(role="user", parts=responses)


def user_content(context: RequestContext) -> types.Content:
    """The caller's message as ADK content: its text, then its files."""
    parts = [types.Part(text=prompt_text(context.message))]
    for file in files_of(context.message):
        if file.data is not None:
            blob = types.Blob(data=file.data, mime_type=file.media_type, display_name=file.name)
            parts.append(types.Part(inline_data=blob))
        else:
            reference = types.FileData(file_uri=file.url, mime_type=file.media_type)
            parts.append(types.Part(file_data=reference))
    return types.Content(role="user", parts=parts)


def agent_tools(agent: BaseAgent) -> list[tuple[str, str | None]]:
    """The agent's tools (a tool object's name, a function's name and docstring) and its
    sub-agents, as (name, description)."""
    tools: list[tuple[str, str | None]] = []
    for tool in getattr(agent, "tools", None) or []:
        if isinstance(tool, BaseTool):
            tools.append((tool.name, tool.description))
        elif callable(tool):
            tools.append((getattr(tool, "__name__", ""), getattr(tool, "__doc__", None)))
    tools.extend((sub.name, sub.description) for sub in agent.sub_agents)
    return tools


def as_agent(
    agent: BaseAgent | None = None,
    *,
    runner: Runner | None = None,
    session_service: BaseSessionService | None = None,
    run_config: RunConfig | None = None,
    name: str | None = None,
    description: str | None = None,
    **card: Any,
) -> Agent:
    """An accord `Agent` running the ADK `agent` (or the agent of `runner`).

    Each A2A context is a session of the runner's session service (an
    `InMemorySessionService` unless `session_service` or `runner` gives one) whose user id is
    the caller's principal id; the principal's id, scheme and scopes are also in the session
    state under `principal`. Runs stream (`StreamingMode.SSE`) unless `run_config` says
    otherwise. A long-running tool's call, or a request for input, makes the task
    `input-required`; the answer in the same task is sent back as the function's response
    (a confirmation: "yes" confirms). The card has the agent's name and description, its
    tools and sub-agents as skills; `card` (any argument of `Agent`) says more or otherwise.
    """
    if runner is None:
        if agent is None:
            raise ValueError("as_agent needs an ADK agent or a runner")
        runner = Runner(
            app_name=agent.name,
            agent=agent,
            session_service=session_service or InMemorySessionService(),
        )
    root = agent or runner.agent
    return adapted_agent(
        ADKExecutor(runner, run_config=run_config),
        name=name or root.name,
        description=description or getattr(root, "description", None),
        tools=agent_tools(root) if isinstance(root, BaseAgent) else [],
        **card,
    )
