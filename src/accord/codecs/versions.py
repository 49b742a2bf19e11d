"""A2A protocol versions: which one a request names (`A2A-Version`) and which ones we speak."""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum

from accord.errors import VersionNotSupported

VERSION_HEADER = "A2A-Version"


class ProtocolVersion(StrEnum):
    """A protocol version this server speaks, as the `Major.Minor` the spec negotiates."""

    V0_1 = "0.1"
    V0_3 = "0.3"
    V1_0 = "1.0"


_SUPPORTED: dict[tuple[int, int], ProtocolVersion] = {
    (0, 1): ProtocolVersion.V0_1,
    (0, 2): ProtocolVersion.V0_3,  # 0.2.x has the JSON-RPC methods and shapes of 0.3
    (0, 3): ProtocolVersion.V0_3,
    (1, 0): ProtocolVersion.V1_0,
}
# Major and minor are short: longer digit runs name no version (and `int` refuses huge ones).
_VERSION = re.compile(r"0*(\d{1,6})\.0*(\d{1,6})(?:\.\d{1,6})?", re.ASCII)
_SHOWN = 40
"""How much of an unsupported version an error repeats."""

SUPPORTED_VERSIONS = ", ".join(
    sorted({v.value for v in _SUPPORTED.values() if v is not ProtocolVersion.V0_1})
)
"""The versions a client can ask for with `A2A-Version`, as errors list them.

Not 0.1: it predates the header (its clients never send it) and is known by its method names;
naming it only picks 0.1's shapes for the methods 0.1 shares with 0.3 (docs/versions.md).
"""


_BY_NAME = {version.value: version for version in ProtocolVersion}


def parse_version(value: str) -> ProtocolVersion:
    """The version `value` names; the patch number is ignored and an empty value means 0.3.

    Raises VersionNotSupported for anything else.
    """
    exact = _BY_NAME.get(value)  # what nearly every request sends: "1.0", "0.3"
    if exact is not None:
        return exact
    text = value.strip()
    if not text:
        return ProtocolVersion.V0_3
    match = _VERSION.fullmatch(text)
    version = _SUPPORTED.get((int(match[1]), int(match[2]))) if match else None
    if version is None:
        shown = text if len(text) <= _SHOWN else text[:_SHOWN] + "..."
        raise VersionNotSupported(
            f"A2A-Version {shown!r} is not supported; this server speaks {SUPPORTED_VERSIONS}",
            data={"requestedVersion": shown, "supportedVersions": SUPPORTED_VERSIONS},
        )
    return version


def named_version(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """The raw `A2A-Version` of a request: the header, else the query parameter.

    None when neither is there or both are empty (a client from before the header).
    """
    value = headers.get(VERSION_HEADER) or query.get(VERSION_HEADER)
    return value if value and value.strip() else None


def version_hint(named: str | None) -> ProtocolVersion:
    """The version to answer in before the method is known: the one a request names
    (`named_version`), if we speak it."""
    try:
        return parse_version(named or "")
    except VersionNotSupported:
        return ProtocolVersion.V0_3


def check_named_version(
    served: ProtocolVersion,
    named: str | None,
    method: str,
    *,
    kind: str = "method",
    hint: str = "",
) -> None:
    """Refuse a request whose named version is not `served`, the version `method` belongs to.

    A request that names no version is served in the version of its method: no client of
    0.3 (the version a missing header stands for) can send another version's method name.
    `kind` says what `method` is (a JSON-RPC method, an HTTP+JSON route); `hint` ends the
    error message with where the other versions are.
    """
    if named is None:
        return
    requested = parse_version(named)
    if requested is not served:
        raise VersionNotSupported(
            f"{method} is an A2A {served} {kind}, but the request asks for A2A-Version"
            f" {named.strip()}; send A2A-Version: {served} with it{hint}",
            data={"requestedVersion": named.strip(), "methodVersion": served.value},
        )
