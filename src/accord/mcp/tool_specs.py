"""The MCP tools an agent card makes: one per skill (one per agent without skills), and the
arguments a call of one carries."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from accord.core.media_types import any_accepted
from accord.types import AgentCard, AgentSkill

MAX_NAME = 128
"""MCP's limit on a tool name (letters, digits, `_`, `-` and `.`)."""
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True, slots=True)
class AgentTool:
    """One tool: which agent (its index among the bridged ones), which skill, how it is called."""

    name: str
    agent: int
    card: AgentCard
    skill: AgentSkill | None

    @property
    def input_modes(self) -> list[str]:
        """The media types the skill (or, without one, the agent) takes."""
        modes = self.skill.input_modes if self.skill and self.skill.input_modes else None
        return modes or self.card.default_input_modes or ["text/plain"]

    @property
    def description(self) -> str:
        """What the skill does, its examples, and whose skill it is."""
        card = self.card
        if self.skill is None:
            lines = [card.description or card.name]
        else:
            lines = [self.skill.description, f"A skill of the A2A agent {card.name}."]
            if self.skill.examples:
                lines.append("Examples: " + "; ".join(self.skill.examples[:5]))
        lines.append(
            "The agent may answer with a question (state input-required): call again with its"
            " taskId and your answer as the message."
        )
        return "\n".join(lines)

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments: the message, the task or context it
        continues, and data or files when the skill takes them."""
        properties: dict[str, Any] = {
            "message": {"type": "string", "description": "What to ask the agent, in words."},
            "taskId": {
                "type": "string",
                "description": "The taskId of an earlier result that asked for input, to answer"
                " it in the same task.",
            },
            "contextId": {
                "type": "string",
                "description": "The contextId of an earlier result, to stay in its conversation.",
            },
        }
        modes = self.input_modes
        if any_accepted(["application/json"], modes):
            properties["data"] = {
                "type": "object",
                "description": "Structured data for the agent (a JSON object).",
            }
        if any(_is_file_mode(mode) for mode in modes):
            properties["files"] = {
                "type": "array",
                "description": "Files for the agent; it takes " + ", ".join(modes) + ".",
                "items": {
                    "type": "object",
                    "properties": {
                        "data": {"type": "string", "description": "The content, base64."},
                        "mimeType": {"type": "string"},
                        "name": {"type": "string"},
                    },
                    "required": ["data"],
                },
            }
        return {
            "type": "object",
            "properties": properties,
            "required": ["message"],
            "additionalProperties": False,
        }

    def read_arguments(self, arguments: dict[str, Any] | None) -> ToolArguments:
        """A call's arguments, checked against this tool's schema (BadArguments otherwise)."""
        offered = self.input_schema()["properties"]
        unknown = sorted(set(arguments or {}) - set(offered))
        if unknown:
            names = ", ".join(unknown)
            raise BadArguments(f"bad arguments: {names}: not an argument of {self.name}")
        return read_arguments(arguments)


def _is_file_mode(mode: str) -> bool:
    """Whether a skill taking `mode` takes files (anything but text and JSON)."""
    kind = mode.split(";")[0].strip().lower()
    return not kind.startswith("text/") and kind != "application/json"


def agent_tools(cards: list[AgentCard]) -> list[AgentTool]:
    """The tools of the agents whose cards are given, in order, each name unique."""
    tools: list[AgentTool] = []
    taken: set[str] = set()
    for index, card in enumerate(cards):
        skills: list[AgentSkill | None] = list(card.skills) or [None]
        for skill in skills:
            name = _unique(tool_name(skill.id if skill else card.name), taken)
            taken.add(name)
            tools.append(AgentTool(name, index, card, skill))
    return tools


def tool_name(text: str) -> str:
    """`text` as a tool name: runs of other characters become `_`, at most MAX_NAME long."""
    name = _NOT_IN_NAME.sub("_", text.strip()).strip("_").lower()
    return name[:MAX_NAME] or "agent"


def _unique(name: str, taken: set[str]) -> str:
    found, number = name, 1
    while found in taken:
        number += 1
        suffix = f"_{number}"
        found = name[: MAX_NAME - len(suffix)] + suffix
    return found


class FileArgument(BaseModel):
    """A file given to a tool: base64 content, its media type and name."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    data: str = Field(min_length=1)
    mime_type: str | None = Field(default=None, alias="mimeType")
    name: str | None = None


class ToolArguments(BaseModel):
    """The arguments of a call of an agent's tool."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    message: str
    task_id: str | None = Field(default=None, alias="taskId", min_length=1)
    context_id: str | None = Field(default=None, alias="contextId", min_length=1)
    data: dict[str, Any] | None = None
    files: list[FileArgument] | None = None


class BadArguments(ValueError):
    """A call's arguments do not fit the tool's schema; the message names what is wrong."""


def read_arguments(arguments: dict[str, Any] | None) -> ToolArguments:
    """The call's arguments, checked (BadArguments naming each problem otherwise)."""
    try:
        return ToolArguments.model_validate(arguments or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(place) for place in error['loc']) or 'arguments'}: {error['msg']}"
            for error in exc.errors()
        )
        raise BadArguments(f"bad arguments: {problems}") from None
