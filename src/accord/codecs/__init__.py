"""Codecs: the wire shapes of each A2A protocol version, turned into canonical objects and back."""

from accord.codecs.base import JsonRpcCodec, Method
from accord.codecs.v0_1 import V01Codec
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
from accord.errors import VersionNotSupported

JSONRPC_CODECS: dict[ProtocolVersion, JsonRpcCodec] = {
    codec.version: codec for codec in (V01Codec(), V03Codec(), V10Codec())
}
"""The JSON-RPC codec of each protocol version this server speaks."""

_BY_METHOD: dict[str, dict[ProtocolVersion, JsonRpcCodec]] = {}
"""Each method name, with the codecs of the versions that have it."""
for _codec in JSONRPC_CODECS.values():
    for _method in _codec.methods:
        _BY_METHOD.setdefault(_method, {})[_codec.version] = _codec


def jsonrpc_codec_of(method: str, named: str | None = None) -> JsonRpcCodec | None:
    """The codec serving `method` to a request that names version `named` (`A2A-Version`).

    A method name belongs to one version, except `tasks/get`, `tasks/cancel` and
    `tasks/resubscribe`: 0.1 and 0.3 share them, with the same params. Of those the named
    version gets its own; a request naming no version (or one without the method) gets 0.3's,
    the spec's reading of a missing `A2A-Version` (docs/versions.md).
    """
    codecs = _BY_METHOD.get(method)
    if not codecs:
        return None
    if len(codecs) == 1:
        return next(iter(codecs.values()))
    try:
        wanted = parse_version(named or "")
    except VersionNotSupported:  # refused once the codec is known (check_named_version)
        wanted = ProtocolVersion.V0_3
    return codecs.get(wanted, codecs[ProtocolVersion.V0_3])


__all__ = [
    "JSONRPC_CODECS",
    "VERSION_HEADER",
    "JsonRpcCodec",
    "Method",
    "ProtocolVersion",
    "V01Codec",
    "V03Codec",
    "V10Codec",
    "check_named_version",
    "jsonrpc_codec_of",
    "named_version",
    "parse_version",
    "version_hint",
]
