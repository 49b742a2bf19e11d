"""The agent card every version reads (the 0.3 card and the 1.0 card in one JSON object), and
a card of any version read back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from accord.codecs import card_v1_0, v0_3
from accord.codecs.field_problems import describe_validation_error
from accord.codecs.versions import ProtocolVersion
from accord.errors import A2AError
from accord.types import AgentCard

CARD_SCHEMAS = {"0.2": "0.2.5", "0.3": "0.3.0", "1.0": "1.0"}
"""The versions a card can be written in (`Major.Minor`), each with the release of the
specification whose schema its cards follow."""


class InvalidCard(ValueError):
    """A JSON document that is no agent card of any version; the message says why."""


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


CardShape = Callable[[AgentCard], dict[str, Any]]
"""A card written in one shape: the union card, or one version's card."""


def card_shape(version: ProtocolVersion | None) -> CardShape:
    """The shape a card is served in to a GET naming `version` (None: naming none, or one not
    spoken): the exact 1.0 AgentCard for 1.0, the union card every version reads otherwise."""
    return card_v1_0.agent_card if version is ProtocolVersion.V1_0 else union_card


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


def read_card(document: object) -> AgentCard:
    """The canonical card of a card `document` of any version: a 0.x card and the union card
    by their 0.3 members, a 1.0 card (no `url` beside its interfaces) by its 1.0 ones.

    InvalidCard, saying why, when it is none.
    """
    try:
        if isinstance(document, dict) and "url" not in document:
            return card_v1_0.card_from_v1(document)
        return AgentCard.model_validate(document)
    except ValidationError as exc:
        raise InvalidCard(describe_validation_error(exc)) from None
    except A2AError as exc:
        raise InvalidCard(exc.message) from None
    except (TypeError, AttributeError, LookupError) as exc:  # 1.0 fields of the wrong shapes
        raise InvalidCard(f"a field has the wrong type ({exc})") from None


def card_versions(document: dict[str, Any]) -> list[str]:
    """The versions (of CARD_SCHEMAS) a card document is written in, newest first: 1.0 when it
    lists `supportedInterfaces`, its 0.x `protocolVersion` (0.3 when a 0.x card names none)."""
    versions = [ProtocolVersion.V1_0.value] if "supportedInterfaces" in document else []
    declared = document.get("protocolVersion")
    if isinstance(declared, str) and declared.startswith("0.2"):
        versions.append("0.2")
    elif declared is not None or "url" in document or not versions:
        versions.append(ProtocolVersion.V0_3.value)
    return versions
