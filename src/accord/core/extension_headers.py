"""The headers listing extension URIs: those a request asks for, those a response activated."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

EXTENSION_HEADERS = ("A2A-Extensions", "X-A2A-Extensions")
"""1.0 names the header `A2A-Extensions`; 0.3 and the extension guide `X-A2A-Extensions`."""


def listed_extensions(headers: Mapping[str, str]) -> list[str]:
    """The extension URIs headers list (both names, comma-separated), each once."""
    uris: list[str] = []
    for name in EXTENSION_HEADERS:
        value = headers.get(name) or headers.get(name.lower())
        if value:
            uris.extend(uri.strip() for uri in value.split(",") if uri.strip())
    return list(dict.fromkeys(uris))


def extension_headers(uris: Iterable[str]) -> dict[str, str]:
    """The headers listing `uris` for a peer of any version (none for no URI)."""
    value = ", ".join(uris)
    return dict.fromkeys(EXTENSION_HEADERS, value) if value else {}
