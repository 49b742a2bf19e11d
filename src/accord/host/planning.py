"""Which agents a request goes to, and what each is asked: by ranking, or by a model."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from accord.host.ranking import SkillIndex
from accord.host.registry import RemoteAgent
from accord.language import ChatModel, ModelError

log = logging.getLogger(__name__)

JOINING = r"(?:and then|and also|and|then|also|plus)\s+"
SEPARATOR = re.compile(rf"((?:(?<=[.!?])\s+|\s*;\s*)(?:{JOINING})?|,?\s+{JOINING})", re.IGNORECASE)
"""Where a request may hold two: sentence ends, semicolons and joining words (kept, to rejoin)."""


@dataclass(frozen=True, slots=True)
class Assignment:
    """One part of the request, for one agent, and why that agent (its best skill)."""

    agent: RemoteAgent
    text: str
    skill: str


def split(text: str) -> tuple[list[str], list[str]]:
    """The pieces of `text` between separators, and the separators between them."""
    chunks = SEPARATOR.split(text.strip())
    return chunks[0::2], chunks[1::2]


def plan_by_rules(text: str, index: SkillIndex) -> list[Assignment]:
    """Split `text` where it joins requests, give each piece its best-ranked agent, and keep
    together neighbouring pieces for the same agent ("three circles and a star" stays one).

    A piece no skill matches goes with the piece before it (or after, at the start). Empty
    when no agent matches at all.
    """
    pieces, separators = split(text)
    owners: list[tuple[RemoteAgent, str] | None] = []
    for piece in pieces:
        ranked = index.rank(piece)
        owners.append((ranked[0].agent, ranked[0].skill) if ranked else None)
    if not any(owners):
        ranked = index.rank(text)
        return [Assignment(ranked[0].agent, text.strip(), ranked[0].skill)] if ranked else []
    first = next(owner for owner in owners if owner is not None)
    for position, owner in enumerate(owners):
        owners[position] = owner or (owners[position - 1] if position else first)
    assignments: list[Assignment] = []
    for position, (piece, owner) in enumerate(zip(pieces, owners, strict=True)):
        assert owner is not None
        agent, skill = owner
        if assignments and assignments[-1].agent.url == agent.url:
            last = assignments[-1]
            joined = last.text + separators[position - 1] + piece
            assignments[-1] = Assignment(agent, joined, last.skill)
        else:
            assignments.append(Assignment(agent, piece, skill))
    return assignments


INSTRUCTIONS = (
    "You route a user's request to agents. The agents, by number:\n{agents}\n"
    "Split the request into the parts different agents must handle and choose the best agent "
    'for each. Answer with JSON: {{"tasks": [{{"agent": <number>, "request": <what to ask '
    "that agent, in the user's words>}}]}}. Use an empty list when no agent fits."
)


def describe_agents(agents: Sequence[RemoteAgent]) -> str:
    lines = []
    for number, agent in enumerate(agents, 1):
        skills = [
            {"name": s.name, "description": s.description, "examples": s.examples or []}
            for s in agent.card.skills
        ]
        lines.append(f"{number}. {agent.name}: {agent.card.description} skills: {skills}")
    return "\n".join(lines)


def assignments_from_model(
    answer: Mapping[str, Any], agents: Sequence[RemoteAgent]
) -> list[Assignment]:
    """The model's `{"tasks": [...]}`, checked; ValueError when it names no agent or no text."""
    tasks = answer.get("tasks")
    if not isinstance(tasks, list):
        raise ValueError(f"expected a list of tasks, got {json.dumps(answer)[:200]}")
    assignments = []
    for task in tasks:
        number, request = task.get("agent"), task.get("request")
        if not isinstance(number, int) or not 1 <= number <= len(agents):
            raise ValueError(f"no agent numbered {number!r}")
        if not isinstance(request, str) or not request.strip():
            raise ValueError("a task without a request")
        assignments.append(Assignment(agents[number - 1], request.strip(), "chosen by the model"))
    return assignments


ADDRESSED = re.compile(r"^\s*@(?P<name>[^\s:,]+)[\s:,]+(?P<text>\S.*)$", re.DOTALL)


def addressed(text: str, agents: Sequence[RemoteAgent]) -> Assignment | None:
    """`@name request`: the request for the agent so named (its name without spaces, any
    case), when one is."""
    found = ADDRESSED.match(text)
    if found is None:
        return None
    name = found["name"].lower()
    for agent in agents:
        if agent.name.replace(" ", "").lower() == name:
            return Assignment(agent, found["text"].strip(), "addressed by name")
    return None


async def plan(text: str, agents: Sequence[RemoteAgent]) -> list[Assignment]:
    """Which agents to ask what: the agent named with `@name`, else a model's choice when
    one is configured (the samples' `ACCORD_LLM_*` variables), else the lexical ranking; the
    ranking also when the model cannot be reached or answers something unusable."""
    chosen = addressed(text, agents)
    if chosen is not None:
        return [chosen]
    model = ChatModel.from_env()
    if model is not None and agents:
        instructions = INSTRUCTIONS.format(agents=describe_agents(agents))
        try:
            return assignments_from_model(await model.extract(instructions, text), agents)
        except (ModelError, ValueError, TypeError, AttributeError) as exc:
            log.warning("host: the model could not route the request, ranking instead: %s", exc)
    return plan_by_rules(text, SkillIndex(agents))
