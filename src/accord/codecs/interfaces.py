"""A card's interfaces as every version lists them, each with the protocol version it speaks."""

from __future__ import annotations

from accord.codecs.versions import ProtocolVersion, parse_version
from accord.errors import VersionNotSupported
from accord.types import AgentCard, AgentInterface, TransportProtocol

JSONRPC = TransportProtocol.JSONRPC.value
LEGACY_INTERFACE_VERSION = "0.3"
"""The protocol version of an interface of a 0.x card that names none (0.3 and 0.2 cards
have `protocolVersion`; a missing one is read as 0.3, as a missing `A2A-Version` is)."""
CARD_PROTOCOL_VERSION = "0.3.0"
"""The `protocolVersion` of the 0.3 card accord writes."""


def card_interfaces(card: AgentCard, version: str | None = None) -> list[AgentInterface]:
    """Every interface of the card, in its order of preference, each with its version.

    A 1.0 card lists them in `supportedInterfaces`; a 0.x card has its `url` (speaking its
    preferred transport) and `additionalInterfaces`, all in `version`, or else in the card's
    `protocolVersion`.
    """
    if card.supported_interfaces:
        return list(card.supported_interfaces)
    main = AgentInterface(url=card.url, transport=card.preferred_transport or JSONRPC)
    listed = {(i.url, i.transport): i for i in (main, *(card.additional_interfaces or ()))}
    said = version or card.protocol_version or CARD_PROTOCOL_VERSION
    return [
        i.model_copy(update={"protocol_version": i.protocol_version or said})
        for i in listed.values()
    ]


def interface_version(interface: AgentInterface) -> str:
    """The protocol version `interface` speaks, as its card says it (0.3 when it says none)."""
    return interface.protocol_version or LEGACY_INTERFACE_VERSION


def interface_key(interface: AgentInterface) -> tuple[str, ProtocolVersion] | None:
    """The (binding, version) of an interface; None when its version is none accord knows."""
    try:
        return interface.transport, parse_version(interface_version(interface))
    except VersionNotSupported:
        return None


def implied_interfaces(card: AgentCard) -> list[AgentInterface]:
    """The interfaces a card's agent may speak without its card saying so: A2A 0.1 at its
    first JSON-RPC interface. Cards of 0.1 agents predate `protocolVersion` (a card naming
    none reads as 0.3), so only a client asking for 0.1 takes this one; none when the card
    lists a 0.1 interface."""
    listed = card_interfaces(card)
    if any(_version_of(i) is ProtocolVersion.V0_1 for i in listed):
        return []
    first = next((i for i in listed if i.transport == JSONRPC), None)
    if first is None:
        return []
    return [first.model_copy(update={"protocol_version": ProtocolVersion.V0_1.value})]


def _version_of(interface: AgentInterface) -> ProtocolVersion | None:
    key = interface_key(interface)
    return key[1] if key is not None else None
