"""Choosing where to send JSON-RPC calls among the interfaces an agent card offers."""

from __future__ import annotations

from accord.errors import A2AClientError
from accord.types import AgentCard, TransportProtocol


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
