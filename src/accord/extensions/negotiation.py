"""Extension activation: which of the extensions a client asked for this request gets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from accord.core.extension import Extension

REQUEST_HEADERS = ("A2A-Extensions", "X-A2A-Extensions")
"""1.0 names the header `A2A-Extensions`; 0.3 and the extension guide `X-A2A-Extensions`."""


def requested_extensions(headers: Mapping[str, str]) -> list[str]:
    """The extension URIs a request asks to activate (both header names, comma-separated)."""
    uris: list[str] = []
    for name in REQUEST_HEADERS:
        value = headers.get(name) or headers.get(name.lower())
        if value:
            uris.extend(uri.strip() for uri in value.split(",") if uri.strip())
    return list(dict.fromkeys(uris))


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
        if not self.active:
            return {}
        value = ", ".join(self.uris)
        return {name: value for name in REQUEST_HEADERS}


def negotiate(supported: Sequence[Extension], requested: Iterable[str]) -> Activation:
    """Activate the supported extensions the client asked for; note required ones it did not."""
    asked = set(requested)
    return Activation(
        active=tuple(e for e in supported if e.uri in asked),
        missing_required=tuple(e.uri for e in supported if e.required and e.uri not in asked),
    )
