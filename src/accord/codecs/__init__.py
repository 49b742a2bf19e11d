"""Codecs: the wire shapes of each A2A protocol version, turned into canonical objects and back."""

from accord.codecs.base import JsonRpcCodec, Method
from accord.codecs.v0_3 import V03Codec
from accord.codecs.v1_0 import V10Codec
from accord.codecs.versions import (
    VERSION_HEADER,
    ProtocolVersion,
    check_named_version,
    named_version,
    parse_version,
    version_hint,
)

JSONRPC_CODECS: dict[ProtocolVersion, JsonRpcCodec] = {
    codec.version: codec for codec in (V03Codec(), V10Codec())
}
"""The JSON-RPC codec of each protocol version this server speaks."""

_BY_METHOD = {name: codec for codec in JSONRPC_CODECS.values() for name in codec.methods}


def jsonrpc_codec_of(method: str) -> JsonRpcCodec | None:
    """The codec of the version whose JSON-RPC methods include `method` (names never overlap:
    0.x names have slashes, 1.0 names are PascalCase)."""
    return _BY_METHOD.get(method)


__all__ = [
    "JSONRPC_CODECS",
    "VERSION_HEADER",
    "JsonRpcCodec",
    "Method",
    "ProtocolVersion",
    "V03Codec",
    "V10Codec",
    "check_named_version",
    "jsonrpc_codec_of",
    "named_version",
    "parse_version",
    "version_hint",
]
