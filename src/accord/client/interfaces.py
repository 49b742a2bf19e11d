"""Choosing the interface to talk to among those an agent card offers."""

from __future__ import annotations

from accord.codecs import ProtocolVersion, parse_version
from accord.codecs.interfaces import (
    card_interfaces,
    implied_interfaces,
    interface_key,
    interface_version,
)
from accord.errors import A2AClientError, VersionNotSupported
from accord.types import AgentCard, AgentInterface, TransportProtocol

__all__ = ["card_interfaces", "describe", "interface_key", "jsonrpc_url", "select_interface"]


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


def select_interface(
    card: AgentCard,
    spoken: frozenset[tuple[str, ProtocolVersion]],
    *,
    transport: str | None = None,
    version: str | None = None,
) -> AgentInterface:
    """The first interface of the card (in its order) that the client speaks (`spoken`) and
    that has the `transport` and `version` asked for, if any are.

    With a `version`, the interfaces the card implies are candidates too, after those it lists
    (`implied_interfaces`: 0.1 at its JSON-RPC interface, as 0.1 cards name no version).
    A2AClientError, listing what the card offers, when no interface fits.
    """
    wanted_version = _version(version) if version else None

    def fits(interface: AgentInterface) -> bool:
        key = interface_key(interface)
        return (
            key is not None
            and key in spoken
            and (not transport or key[0].upper() == transport.upper())
            and (wanted_version is None or key[1] is wanted_version)
        )

    listed = card_interfaces(card)
    implied = implied_interfaces(card) if wanted_version is not None else []
    chosen = next((i for i in (*listed, *implied) if fits(i)), None)
    if chosen is not None:
        return chosen
    asked = " ".join(filter(None, (transport, version))) or "interface accord speaks"
    offered = ", ".join(describe(i) for i in listed) or "none"
    raise A2AClientError(f"agent {card.name!r} offers no {asked} (it offers: {offered})")


def describe(interface: AgentInterface) -> str:
    """`BINDING VERSION at URL`."""
    return f"{interface.transport} {interface_version(interface)} at {interface.url}"


def _version(version: str) -> ProtocolVersion:
    try:
        return parse_version(version)
    except VersionNotSupported:
        raise A2AClientError(f"accord does not speak A2A version {version!r}") from None
