"""The agent card every version reads: the 0.3 card and the 1.0 card in one JSON object."""

from __future__ import annotations

from typing import Any

from accord.codecs import card_v1_0, v0_3
from accord.types import AgentCard


def union_card(card: AgentCard) -> dict[str, Any]:
    """The 0.3 card and the 1.0 card of `card` laid over each other.

    For the HTTP GETs of a card, which say no version. Both say the same in every member they
    share; what only one has sits beside it, for the other version's clients to ignore:

    - only 0.3: `url`, `preferredTransport`, `protocolVersion`, `additionalInterfaces`,
      `security`, `supportsAuthenticatedExtendedCard`, `capabilities.stateTransitionHistory`,
      each skill's `security`, and each security scheme's `type`-tagged OpenAPI members;
    - only 1.0: `supportedInterfaces`, `securityRequirements`, `capabilities.extendedAgentCard`,
      each skill's `securityRequirements`, and each security scheme's oneof member
      (`httpAuthSecurityScheme`, ...).

    Without its 0.3-only members it is a 1.0 AgentCard; without its 1.0-only ones, a 0.3 one.
    """
    merged: dict[str, Any] = overlay(v0_3.agent_card(card), card_v1_0.agent_card(card))
    return merged


def overlay(first: Any, second: Any, path: str = "card") -> Any:
    """`first` and `second` merged: objects member by member, lists of one length item by item.

    Any other value must be the same in both (ValueError names where it is not).
    """
    if isinstance(first, dict) and isinstance(second, dict):
        merged = dict(first)
        for key, value in second.items():
            merged[key] = overlay(first[key], value, f"{path}.{key}") if key in first else value
        return merged
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        pairs = enumerate(zip(first, second, strict=True))
        return [overlay(a, b, f"{path}[{i}]") for i, (a, b) in pairs]
    if first != second:
        raise ValueError(f"the two cards disagree at {path}: {first!r} != {second!r}")
    return first
