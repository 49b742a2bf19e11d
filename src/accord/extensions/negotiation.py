"""Extension activation: which of the extensions a client asked for this request gets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from accord.core.extension import Extension
from accord.core.extension_headers import extension_headers, listed_extensions


def requested_extensions(headers: Mapping[str, str]) -> list[str]:
    """The extension URIs a request asks to activate (both header names, comma-separated)."""
    return listed_extensions(headers)


@dataclass(frozen=True, slots=True)
class Activation:
    """The outcome of negotiation for one request."""

    active: tuple[Extension, ...]
    missing_required: tuple[str, ...]

    @property
    def uris(self) -> list[str]:
        return [extension.uri for extension in self.active]

    def response_headers(self) -> dict[str, str]:
        """The headers telling the client which extensions this request activated."""
        return extension_headers(self.uris)


def negotiate(supported: Sequence[Extension], requested: Iterable[str]) -> Activation:
    """Activate the supported extensions the client asked for; note required ones it did not."""
    asked = set(requested)
    return Activation(
        active=tuple(e for e in supported if e.uri in asked),
        missing_required=tuple(e.uri for e in supported if e.required and e.uri not in asked),
    )
