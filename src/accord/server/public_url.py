"""check_public_url: whether a URL can be the one clients reach an agent at."""

from __future__ import annotations

from urllib.parse import urlsplit


def check_public_url(url: str, name: str = "public_url") -> str:
    """`url`, if it can be an agent's public URL: an absolute http or https URL with a host,
    no credentials, no query and no fragment (a path is kept: the agent may be served below
    one). Otherwise ValueError, whose message names the setting as `name`."""
    if any(char.isspace() or not char.isprintable() for char in url):
        raise ValueError(f"{name} cannot contain spaces or control characters, got {url!r}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number or too large
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}, got {url!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{name} must be an http:// or https:// URL with a host, got {url!r}")
    if parts.username is not None:
        raise ValueError(f"{name} cannot carry credentials (user@): every caller sees it")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise ValueError(f"{name} cannot have a query or a fragment, got {url!r}")
    return url
