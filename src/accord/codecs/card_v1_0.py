"""The agent card in A2A 1.0 shapes (supportedInterfaces, proto security), both ways."""

from __future__ import annotations

from typing import Any

from accord.codecs.base import (
    field_error,
)
from accord.codecs.interfaces import LEGACY_INTERFACE_VERSION, card_interfaces, interface_version
from accord.codecs.protojson import proto_object
from accord.types import (
    AgentCard,
    AgentInterface,
    adapters,
)

#
# Cards are only ever written in 1.0 form here (the server serves them; nothing reads them back).

_CARD_ONLY_V0_3 = frozenset(
    {
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
        "supportedInterfaces",  # converted below
        "security",  # 1.0: securityRequirements
        "supportsAuthenticatedExtendedCard",  # 1.0: capabilities.extendedAgentCard
    }
)

# Each 0.3 security scheme `type`: its member in the proto's SecurityScheme oneof, and the
# members it renames.
_SECURITY_SCHEMES: dict[str, tuple[str, dict[str, str]]] = {
    "apiKey": ("apiKeySecurityScheme", {"in": "location"}),
    "http": ("httpAuthSecurityScheme", {}),
    "oauth2": ("oauth2SecurityScheme", {}),
    "openIdConnect": ("openIdConnectSecurityScheme", {}),
    "mutualTLS": ("mtlsSecurityScheme", {}),
}
_OAUTH_FLOWS = ("authorizationCode", "clientCredentials", "implicit", "password")


def agent_card(card: AgentCard) -> dict[str, Any]:
    """The ProtoJSON of the 1.0 AgentCard saying what `card` says.

    1.0 lists every interface in `supportedInterfaces`; a card that has none listed is a 0.3
    card, whose `url` and `additionalInterfaces` speak 0.3. The extended card capability moves
    into `capabilities`; security schemes and requirements take their proto shapes.
    """
    obj = card.to_wire()
    out = {k: v for k, v in obj.items() if k not in _CARD_ONLY_V0_3}
    capabilities = proto_capabilities(obj["capabilities"])
    if card.supports_authenticated_extended_card is not None:
        capabilities["extendedAgentCard"] = card.supports_authenticated_extended_card
    out["capabilities"] = capabilities
    out["supportedInterfaces"] = [
        _interface(interface) for interface in card_interfaces(card, LEGACY_INTERFACE_VERSION)
    ]
    if "securitySchemes" in obj:
        schemes = obj["securitySchemes"].items()
        out["securitySchemes"] = {name: security_scheme(scheme) for name, scheme in schemes}
    if "security" in obj:
        out["securityRequirements"] = security_requirements(obj["security"])
    out["skills"] = [_skill(skill) for skill in obj["skills"]]
    return out


def proto_capabilities(capabilities: dict[str, Any], *plain_bools: str) -> dict[str, Any]:
    """A card's capabilities as the proto spells them: no `stateTransitionHistory`, and no
    false extension `required` nor any of `plain_bools` (proto3 bools without presence, which
    a proto cannot tell from unset: a card signed with them would not verify once parsed)."""
    out = {
        k: v
        for k, v in capabilities.items()
        if k != "stateTransitionHistory" and not (k in plain_bools and v is False)
    }
    if "extensions" in out:
        out["extensions"] = [
            {k: v for k, v in extension.items() if not (k == "required" and v is False)}
            for extension in out["extensions"]
        ]
    return out


def security_scheme(scheme: dict[str, Any]) -> dict[str, Any]:
    """A 0.3 security scheme (OpenAPI's, tagged by `type`) as the proto's oneof.

    The proto's OAuthFlows holds one flow: of several, the first in the proto's order is kept.
    """
    member, renamed = _SECURITY_SCHEMES[scheme["type"]]
    fields = {renamed.get(k, k): v for k, v in scheme.items() if k != "type"}
    if "flows" in fields:
        flow = next((name for name in _OAUTH_FLOWS if name in fields["flows"]), None)
        fields["flows"] = {} if flow is None else {flow: fields["flows"][flow]}
    return {member: fields}


def security_requirements(requirements: list[dict[str, list[str]]]) -> list[dict[str, Any]]:
    """0.3 security requirements (scheme name -> scopes) as the proto's SecurityRequirement."""
    return [
        {"schemes": {name: {"list": scopes} for name, scopes in requirement.items()}}
        for requirement in requirements
    ]


def _interface(interface: AgentInterface) -> dict[str, Any]:
    out = {
        "url": interface.url,
        "protocolBinding": interface.transport,
        "protocolVersion": interface_version(interface),
    }
    if interface.tenant:
        out["tenant"] = interface.tenant
    return out


def _skill(skill: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in skill.items() if k != "security"}
    if "security" in skill:
        out["securityRequirements"] = security_requirements(skill["security"])
    return out


def card_from_v1(result: Any) -> AgentCard:
    """The canonical card saying what a 1.0 AgentCard says (the reverse of `agent_card`).

    Its 0.3 view (`url`, `preferredTransport`) is its first interface.
    """
    card = proto_object(result, "")
    interfaces = card.get("supportedInterfaces") or [{}]
    first = proto_object(interfaces[0], "supportedInterfaces.0")
    out = {k: v for k, v in card.items() if k not in ("securityRequirements",)}
    out["url"] = first.get("url", "")
    out["preferredTransport"] = first.get("protocolBinding", first.get("transport"))
    capabilities = dict(proto_object(card.get("capabilities", {}), "capabilities"))
    if "extendedAgentCard" in capabilities:
        out["supportsAuthenticatedExtendedCard"] = capabilities.pop("extendedAgentCard")
    out["capabilities"] = capabilities
    return adapters.AGENT_CARD.validate_python(
        proto_card_security(out, "securityRequirements", card)
    )


def proto_card_security(
    out: dict[str, Any], requirements: str, card: dict[str, Any]
) -> dict[str, Any]:
    """`out` with the proto shapes of `card`'s security schemes and requirements (the latter
    under `requirements`, in the card and in each skill) turned back into 0.3's."""
    if "securitySchemes" in card:
        schemes = card["securitySchemes"].items()
        out["securitySchemes"] = {name: security_scheme_from_proto(s) for name, s in schemes}
    if requirements in card:
        out["security"] = security_requirements_from_proto(card[requirements])
    skills = card.get("skills", [])
    if not isinstance(skills, list) or not all(isinstance(skill, dict) for skill in skills):
        out["skills"] = skills  # not skills at all: left for validation to name the problem
        return out
    out["skills"] = [
        {
            **{k: v for k, v in skill.items() if k != requirements},
            **(
                {"security": security_requirements_from_proto(skill[requirements])}
                if requirements in skill
                else {}
            ),
        }
        for skill in skills
    ]
    return out


_SCHEME_TYPES = {member: (kind, renamed) for kind, (member, renamed) in _SECURITY_SCHEMES.items()}


def security_scheme_from_proto(scheme: dict[str, Any]) -> dict[str, Any]:
    """The proto's SecurityScheme oneof as the 0.3 (OpenAPI) scheme, tagged by `type`."""
    for member, fields in scheme.items():
        if member in _SCHEME_TYPES:
            kind, renamed = _SCHEME_TYPES[member]
            back = {new: old for old, new in renamed.items()}
            return {"type": kind, **{back.get(k, k): v for k, v in fields.items()}}
    raise field_error("securitySchemes", f"unknown security scheme {sorted(scheme)}")


def security_requirements_from_proto(requirements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The proto's SecurityRequirements as 0.3's (scheme name -> scopes)."""
    return [
        {name: scopes.get("list", []) for name, scopes in requirement.get("schemes", {}).items()}
        for requirement in requirements
    ]
