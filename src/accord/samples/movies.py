"""Movies: answers questions about films with a tool loop — tool use, progress and citations.

Shows: an agent that plans tool calls (search, details, cast over the catalog it ships),
streams each call as a `working` status update, and answers with an artifact whose text
names its sources and whose data part lists every tool call made and the films it used.
With a model configured (`accord.language`) the model runs the loop through the
chat API's tool calls; otherwise built-in rules do.

    accord serve accord.samples.movies:agent
    accord send http://127.0.0.1:8000 "Who directed Alien?" --stream
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Protocol

import accord
from accord.agents import EventSink
from accord.language import ChatModel, ModelError, ToolCall
from accord.samples.movie_catalog import TOOL_SPECS, Json, call_tool, catalog
from accord.types import AgentSkill, DataPart, TaskState, TextPart

log = logging.getLogger(__name__)

MAX_STEPS = 8
MAX_QUESTION = 500
SYSTEM_PROMPT = (
    "You answer questions about films using only the tools given: search the catalog, then "
    "read a film's details or cast by its id. Answer in one or two sentences and name the "
    "films you used. If the catalog has no answer, say so."
)


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call and what it returned."""

    call: ToolCall
    result: Json


class Planner(Protocol):
    """Decides the next tool calls for a question, or the answer once it knows enough."""

    async def next_step(self, question: str, steps: list[Step]) -> list[ToolCall] | str: ...


class RulesPlanner:
    """Plans by rules: search the question's subject, then read details or cast, then answer."""

    ASKS_CAST = re.compile(
        r"\b(cast|actors?|starred|starring|stars in|played|plays|who (is|was|are|were) in)\b"
    )
    ASKS_DIRECTOR = re.compile(r"\b(direct\w*|who made)\b")
    ASKS_YEAR = re.compile(r"\b(when|what year|which year|released)\b")
    ASKS_LIST = re.compile(r"\b(films|movies|which (film|movie)s?)\b")

    async def next_step(self, question: str, steps: list[Step]) -> list[ToolCall] | str:
        asked = question.lower()
        if not steps:
            return [ToolCall("search", {"query": question})]
        found = steps[0].result["results"]
        if not found:
            return "I found no film matching that question in my catalog."
        if self.ASKS_LIST.search(asked):
            titles = ", ".join(f"{film['title']} ({film['year']})" for film in found)
            return f"From my catalog: {titles}."
        if len(steps) == 1:
            wants_cast = self.ASKS_CAST.search(asked) and not self.ASKS_DIRECTOR.search(asked)
            tool = "cast" if wants_cast else "details"
            return [ToolCall(tool, {"id": found[0]["id"]})]
        film = steps[-1].result
        name = f"{film['title']} ({film['year']})"
        if "cast" in film:
            return f"{name} stars {_listed(film['cast'])}."
        if self.ASKS_DIRECTOR.search(asked):
            return f"{name} was directed by {film['director']}."
        if self.ASKS_YEAR.search(asked):
            return f"{film['title']} came out in {film['year']}."
        return f"{name}, directed by {film['director']}: {film['synopsis']}"


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


class ModelPlanner:
    """Lets a chat model plan through the OpenAI-compatible tool-call protocol."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    async def next_step(self, question: str, steps: list[Step]) -> list[ToolCall] | str:
        messages: list[Json] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": question},
        ]
        for number, step in enumerate(steps):
            call_id = step.call.id or f"call_{number}"
            function = {"name": step.call.name, "arguments": json.dumps(step.call.arguments)}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": call_id, "type": "function", "function": function}],
                }
            )
            messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": json.dumps(step.result)}
            )
        reply = await self.model.chat(messages, TOOL_SPECS)
        if reply.tool_calls:
            return reply.tool_calls
        if not reply.content:
            raise ModelError("the model answered with neither tool calls nor text")
        return reply.content


def cited_films(steps: list[Step]) -> list[Json]:
    """The films the answer rests on: those read in detail, else those a search found."""
    read = [step.result for step in steps if step.call.name != "search" and "id" in step.result]
    if not read:
        read = [film for step in steps for film in step.result.get("results", ())]
    films = catalog()
    unique = {film["id"]: films[film["id"]].reference() for film in read if film["id"] in films}
    return list(unique.values())


class MoviesAgent(accord.AgentExecutor):
    """Answers a question about films by calling catalog tools until it can answer."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        await task.start_work()
        question = context.text.strip()
        if not question or len(question) > MAX_QUESTION:
            await task.requires_input(
                f"Ask me about a film in at most {MAX_QUESTION} characters, for example: "
                "Who directed Alien?"
            )
            return
        model = ChatModel.from_env()
        try:
            steps, answer = await self.run(
                question, ModelPlanner(model) if model else RulesPlanner(), task
            )
        except ModelError as exc:
            log.warning("language model failed, answering with the built-in rules: %s", exc)
            steps, answer = await self.run(question, RulesPlanner(), task)
        if answer is None:
            await task.fail(f"No answer after {MAX_STEPS} tool calls; try a narrower question.")
            return
        sources = cited_films(steps)
        if sources:
            answer += "\nSources: " + "; ".join(f"{f['title']} ({f['year']})" for f in sources)
        calls = [
            {"tool": step.call.name, "arguments": step.call.arguments, "result": step.result}
            for step in steps
        ]
        await task.add_artifact(
            [TextPart(text=answer), DataPart(data={"toolCalls": calls, "sources": sources})],
            name="answer",
        )
        await task.complete()

    async def run(
        self, question: str, planner: Planner, task: accord.TaskUpdater
    ) -> tuple[list[Step], str | None]:
        """The tool loop: the steps taken and the answer (None if it did not come in time)."""
        steps: list[Step] = []
        while len(steps) < MAX_STEPS:
            decision = await planner.next_step(question, steps)
            if isinstance(decision, str):
                return steps, decision
            for call in decision[: MAX_STEPS - len(steps)]:
                arguments = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
                await task.update_status(TaskState.WORKING, f"Calling {call.name}({arguments})")
                steps.append(Step(call, call_tool(call.name, call.arguments)))
        return steps, None


agent = accord.Agent(
    MoviesAgent(),
    name="Movies",
    description="Answers questions about films from its catalog, citing what it looked up.",
    skills=[
        AgentSkill(
            id="film_questions",
            name="Answer film questions",
            description=(
                "Answers questions about directors, casts, years and plots of about thirty "
                "well-known films, with the tool calls and sources it used."
            ),
            tags=["movies", "tools", "citations"],
            examples=["Who directed Alien?", "Who starred in The Matrix?", "Films by Spielberg"],
        )
    ],
    input_modes=["text/plain"],
    output_modes=["text/plain", "application/json"],
)
