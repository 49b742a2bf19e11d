"""What the registry records of a card: the facets it filters by and the text it searches."""

from __future__ import annotations

from dataclasses import dataclass

from accord.codecs.interfaces import card_interfaces, interface_version
from accord.types import AgentCard, HTTPAuthSecurityScheme

FACETS = ("skill", "tag", "input_mode", "output_mode", "version", "binding", "provider", "scheme")
"""The filters a search takes, each a facet of the cards (values compared in lower case)."""


@dataclass(frozen=True, slots=True)
class CardText:
    """The searched text of a card, column by column (`accord.registry.schema.SEARCHED`)."""

    name: str
    description: str
    skills: str
    tags: str


def card_text(card: AgentCard) -> CardText:
    """The words a search matches: the name, the description, the skills (names,
    descriptions, examples) and their tags."""
    skills = [
        " ".join([skill.name, skill.description, *(skill.examples or [])]) for skill in card.skills
    ]
    tags = sorted({tag for skill in card.skills for tag in skill.tags})
    return CardText(card.name, card.description, "\n".join(skills), " ".join(tags))


def card_facets(card: AgentCard) -> set[tuple[str, str]]:
    """The (facet, value) pairs of `card`: its skills (by id and name), tags, input and output
    modes (the defaults and the skills'), protocol versions and bindings of its interfaces,
    provider, and security schemes (by type, by HTTP scheme, by name; `none` when it
    declares none)."""
    found: set[tuple[str, str]] = set()
    for skill in card.skills:
        found |= {("skill", skill.id), ("skill", skill.name)}
        found |= {("tag", tag) for tag in skill.tags}
        found |= {("input_mode", mode) for mode in skill.input_modes or ()}
        found |= {("output_mode", mode) for mode in skill.output_modes or ()}
    found |= {("input_mode", mode) for mode in card.default_input_modes}
    found |= {("output_mode", mode) for mode in card.default_output_modes}
    for interface in card_interfaces(card):
        found |= {("version", interface_version(interface)), ("binding", interface.transport)}
    if card.provider is not None:
        found.add(("provider", card.provider.organization))
    for name, scheme in (card.security_schemes or {}).items():
        found |= {("scheme", name), ("scheme", scheme.type)}
        if isinstance(scheme, HTTPAuthSecurityScheme):
            found.add(("scheme", scheme.scheme))
    if not card.security_schemes:
        found.add(("scheme", "none"))
    return {(facet, value.strip().lower()) for facet, value in found if value.strip()}
