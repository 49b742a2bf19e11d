"""The `Agent` an adapter makes: the framework's name and description on its card, the
framework's tools as its skills."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from accord.agents import Agent, AgentExecutor
from accord.types import AgentSkill

MODES = ("text/plain", "application/json")
"""What an adapted agent says it reads and writes unless told otherwise: text, and data."""


def tool_skills(tools: Iterable[tuple[str, str | None]]) -> list[AgentSkill]:
    """A skill per (name, description) of a tool, in order, each name once."""
    skills: dict[str, AgentSkill] = {}
    for name, description in tools:
        if name and name not in skills:
            first_paragraph = (description or "").strip().split("\n\n")[0].strip()
            skills[name] = AgentSkill(
                id=name, name=name, description=first_paragraph or name, tags=["tool"]
            )
    return list(skills.values())


def adapted_agent(
    executor: AgentExecutor,
    *,
    name: str,
    description: str | None,
    tools: Iterable[tuple[str, str | None]] = (),
    **card: Any,
) -> Agent:
    """An `Agent` of `executor`: `card` (any argument of `Agent`) wins over what the framework
    said (name, description, tools as skills)."""
    card.setdefault("skills", tool_skills(tools))
    card.setdefault("input_modes", MODES)
    card.setdefault("output_modes", MODES)
    return Agent(executor, name=name, description=description or name, **card)
