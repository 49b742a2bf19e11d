"""Client transports: one per binding and protocol version, all on canonical objects."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from importlib.util import find_spec
from typing import Any

import httpx

from accord.client.transports.base import IdentifiedEvents, Transport
from accord.client.transports.jsonrpc import JsonRpcTransport
from accord.client.transports.jsonrpc_v0_1 import JsonRpcV01Transport
from accord.client.transports.rest import RestTransport
from accord.codecs import (
    ProtocolVersion,
    rest_v0_3,
    rest_v0_3_client,
    v0_1_client,
    v0_3,
    v1_0_client,
)
from accord.codecs.base import ClientCodec
from accord.codecs.interfaces import JSONRPC, interface_key
from accord.codecs.rest_v1_0 import REST_V1_0
from accord.types import AgentInterface, TransportProtocol

HTTP_JSON = TransportProtocol.HTTP_JSON.value
GRPC = TransportProtocol.GRPC.value

Factory = Callable[..., Transport]

TRANSPORTS: dict[tuple[str, ProtocolVersion], Factory] = {
    (JSONRPC, ProtocolVersion.V1_0): partial(JsonRpcTransport, codec=v1_0_client.CLIENT),
    (JSONRPC, ProtocolVersion.V0_3): partial(JsonRpcTransport, codec=v0_3.CLIENT),
    (JSONRPC, ProtocolVersion.V0_1): partial(JsonRpcV01Transport, codec=v0_1_client.CLIENT),
    (HTTP_JSON, ProtocolVersion.V1_0): partial(
        RestTransport, codec=v1_0_client.CLIENT, routes=REST_V1_0
    ),
    (HTTP_JSON, ProtocolVersion.V0_3): partial(
        RestTransport, codec=rest_v0_3_client.CLIENT, routes=rest_v0_3.REST_V0_3
    ),
}
"""The (binding, version) pairs the client speaks, each with how to make its transport."""


def _grpc_transport(
    http: httpx.AsyncClient,
    interface: AgentInterface,
    codec: ClientCodec[Any],
    headers: Mapping[str, str],
) -> Transport:
    """A GrpcTransport; its module (and grpcio) is imported when a gRPC interface is chosen."""
    from accord.client.transports.grpc import GrpcTransport

    return GrpcTransport(http, interface, codec, headers=headers)


if find_spec("grpc") is not None:  # the `grpc` extra
    TRANSPORTS[GRPC, ProtocolVersion.V1_0] = partial(_grpc_transport, codec=v1_0_client.CLIENT)
    TRANSPORTS[GRPC, ProtocolVersion.V0_3] = partial(_grpc_transport, codec=rest_v0_3_client.CLIENT)


def open_transport(
    http: httpx.AsyncClient, interface: AgentInterface, headers: Mapping[str, str]
) -> Transport:
    """The transport for `interface`, which must be one of TRANSPORTS."""
    key = interface_key(interface)
    if key not in TRANSPORTS:
        raise ValueError(f"no transport for {interface.transport} {interface.protocol_version}")
    factory: Any = TRANSPORTS[key]
    transport: Transport = factory(http, interface, headers=headers)
    for wrap in TRANSPORT_WRAPPERS:
        transport = wrap(transport)
    return transport


TRANSPORT_WRAPPERS: list[Callable[[Transport], Transport]] = []
"""What each transport opened from now on is wrapped in, in order (tracing's client spans)."""


__all__ = [
    "TRANSPORTS",
    "IdentifiedEvents",
    "JsonRpcTransport",
    "JsonRpcV01Transport",
    "RestTransport",
    "Transport",
    "open_transport",
]
