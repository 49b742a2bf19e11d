"""The skills of several upstreams as one card's, and the upstream a caller's skill names."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from accord.errors import InvalidParams
from accord.gateway.card import own_skill
from accord.types import AgentCard, AgentSkill, MessageSendParams

SKILL_KEY = "skill"
"""The metadata key (the message's, else the request's) naming the skill a caller wants."""


@dataclass(frozen=True, slots=True)
class SkillTable:
    """Every upstream's skills under ids unique in the gateway's card: a skill id two
    upstreams share is served as `UPSTREAM/ID` for each (and listed in `collisions`)."""

    skills: list[AgentSkill] = field(default_factory=list)
    owners: dict[str, str] = field(default_factory=dict)
    """Each served skill id's upstream."""
    collisions: dict[str, list[str]] = field(default_factory=dict)
    """Each skill id several upstreams offer, and which."""

    @classmethod
    def of(cls, cards: Mapping[str, AgentCard]) -> SkillTable:
        offered: defaultdict[str, list[str]] = defaultdict(list)
        for name, card in cards.items():
            for skill in card.skills:
                offered[skill.id].append(name)
        table = cls(collisions={i: names for i, names in offered.items() if len(names) > 1})
        for name, card in cards.items():
            for skill in card.skills:
                served = f"{name}/{skill.id}" if skill.id in table.collisions else skill.id
                if served in table.owners:  # an upstream's own skill listed twice
                    continue
                table.owners[served] = name
                table.skills.append(own_skill(skill).model_copy(update={"id": served}))
        return table

    def collision_lines(self) -> list[str]:
        """One line per skill id shared, saying how the card serves it."""
        return [
            f"skill {skill_id!r} is offered by {', '.join(names)}: served as "
            + ", ".join(f"{name}/{skill_id}" for name in names)
            for skill_id, names in self.collisions.items()
        ]

    def owner(self, skill_id: str) -> str:
        """The upstream serving `skill_id` (InvalidParams naming the skills there are)."""
        found = self.owners.get(skill_id)
        if found is not None:
            return found
        if skill_id in self.collisions:
            choices = " or ".join(f"{name}/{skill_id}" for name in self.collisions[skill_id])
            raise InvalidParams(f"skill {skill_id!r} is offered by several agents: name {choices}")
        raise InvalidParams(f"no skill {skill_id!r} here; {self.available()}")

    def available(self) -> str:
        ids = ", ".join(self.owners) or "none"
        return f"name one of the skills ({ids}) in the message's metadata as {SKILL_KEY!r}"


def named_skill(params: MessageSendParams) -> str | None:
    """The skill the caller named: the message's metadata `skill`, else the request's."""
    for metadata in (params.message.metadata, params.metadata):
        if metadata and SKILL_KEY in metadata:
            value = metadata[SKILL_KEY]
            if not isinstance(value, str) or not value:
                raise InvalidParams(f"metadata {SKILL_KEY!r} must be a skill's id (a string)")
            return value
    return None
