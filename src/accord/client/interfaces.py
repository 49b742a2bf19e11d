"""Choosing the interface to talk to among those an agent card offers."""

from __future__ import annotations

from accord.codecs import ProtocolVersion, parse_version
from accord.errors import A2AClientError, VersionNotSupported
from accord.types import AgentCard, AgentInterface, TransportProtocol

JSONRPC = TransportProtocol.JSONRPC.value


def jsonrpc_url(card: AgentCard) -> str:
    """The URL of the card's JSON-RPC interface: its main `url` or an additional interface."""
    preferred = card.preferred_transport or TransportProtocol.JSONRPC.value
    if preferred == TransportProtocol.JSONRPC.value and card.url:
        return card.url
    for interface in card.additional_interfaces or ():
        if interface.transport == TransportProtocol.JSONRPC.value and interface.url:
            return interface.url
    raise A2AClientError(
        f"agent {card.name!r} offers no JSON-RPC interface (preferred transport: {preferred})"
    )


def card_interfaces(card: AgentCard) -> list[AgentInterface]:
    """Every interface of the card, in its order of preference, each with its version.

    A 1.0 card lists them in `supportedInterfaces`; a 0.x card has its `url` (speaking its
    preferred transport) and `additionalInterfaces`, all in the card's `protocolVersion`.
    """
    if card.supported_interfaces:
        return list(card.supported_interfaces)
    main = AgentInterface(
        url=card.url, transport=card.preferred_transport or TransportProtocol.JSONRPC.value
    )
    listed = {(i.url, i.transport): i for i in (main, *(card.additional_interfaces or ()))}
    return [
        i.model_copy(update={"protocol_version": i.protocol_version or card.protocol_version})
        for i in listed.values()
    ]


def select_interface(
    card: AgentCard,
    spoken: frozenset[tuple[str, ProtocolVersion]],
    *,
    transport: str | None = None,
    version: str | None = None,
) -> AgentInterface:
    """The first interface of the card (in its order) that the client speaks (`spoken`) and
    that has the `transport` and `version` asked for, if any are.

    A card says an interface speaks A2A 0.1 with `protocolVersion` `0.1` (or `0.1.x`); a
    card without one is read as 0.3, so 0.1 agents, whose cards predate the field, are
    reached by asking for version 0.1: when no interface of the card says 0.1, its first
    JSON-RPC interface is taken to speak it. A2AClientError, listing what the card offers,
    when no interface fits.
    """
    wanted_version = _version(version) if version else None
    for interface in card_interfaces(card):
        key = interface_key(interface)
        if key is None or key not in spoken:
            continue
        if transport and key[0].upper() != transport.upper():
            continue
        if wanted_version and key[1] is not wanted_version:
            continue
        return interface
    legacy = wanted_version is ProtocolVersion.V0_1 and (transport or JSONRPC).upper() == JSONRPC
    if legacy and (JSONRPC, ProtocolVersion.V0_1) in spoken:
        for interface in card_interfaces(card):
            if interface.transport == JSONRPC:
                return interface.model_copy(update={"protocol_version": ProtocolVersion.V0_1.value})
    asked = " ".join(filter(None, (transport, version))) or "interface accord speaks"
    offered = ", ".join(describe(i) for i in card_interfaces(card)) or "none"
    raise A2AClientError(f"agent {card.name!r} offers no {asked} (it offers: {offered})")


def describe(interface: AgentInterface) -> str:
    """`BINDING VERSION at URL`."""
    version = interface.protocol_version or "0.3"
    return f"{interface.transport} {version} at {interface.url}"


def interface_key(interface: AgentInterface) -> tuple[str, ProtocolVersion] | None:
    """The (binding, version) of an interface; None when its version is none accord knows."""
    try:
        return interface.transport, parse_version(interface.protocol_version or "0.3")
    except VersionNotSupported:
        return None


def _version(version: str) -> ProtocolVersion:
    try:
        return parse_version(version)
    except VersionNotSupported:
        raise A2AClientError(f"accord does not speak A2A version {version!r}") from None
