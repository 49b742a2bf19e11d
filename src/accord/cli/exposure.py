"""The options of the commands that serve that say who may reach them and what they may fetch:
`--allowed-host`, `--fetch-allow`, and the token beyond loopback."""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Sequence
from typing import Annotated

import typer

from accord.cli.errors import BadArgument
from accord.web.allowed_hosts import AllowedHosts
from accord.web.webhook_guard import WebhookGuard, parse_network

FetchAllowOption = Annotated[
    list[str] | None,
    typer.Option(
        "--fetch-allow",
        metavar="CIDR",
        help="Turn the fetch guard on (it is on anyway beyond loopback) and let it reach these"
        " addresses or networks (10.0.0.5, 10.0.0.0/8): agents on loopback or private networks,"
        " for development (repeatable).",
        show_default=False,
    ),
]


def beyond_loopback(host: str) -> bool:
    """Whether listening on `host` lets other machines connect (anything but loopback)."""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return True  # a name: it may resolve to anything


def allowed_hosts(host: str, port: int, names: Sequence[str] | None) -> AllowedHosts:
    """The `Host` names a server listening on `host:port` answers: those it is called by
    without being told (`AllowedHosts.serving`), and `names`; BadArgument naming the option
    of a malformed one."""
    try:
        serving = AllowedHosts.serving(host, port)
    except ValueError as exc:
        raise BadArgument(f"--host: {exc}") from None
    try:
        return AllowedHosts([*serving.patterns, *(names or ())])
    except ValueError as exc:
        raise BadArgument(f"--allowed-host: {exc}") from None


def fetch_guard(host: str, allow: Sequence[str] | None) -> WebhookGuard | None:
    """The guard of what a server listening on `host` fetches: the webhook guard's policy
    (no loopback, private, link-local or metadata address) beyond loopback or with `allow`
    (its exceptions); None, no guard, on loopback without `allow`."""
    if not allow and not beyond_loopback(host):
        return None
    try:
        for entry in allow or ():
            parse_network(entry)
    except ValueError as exc:
        raise BadArgument(f"--fetch-allow: {exc}") from None
    return WebhookGuard(list(allow or ()))


def login_token(host: str, given: str | None) -> str | None:
    """The token a server on `host` requires: `given`, else one made now beyond loopback."""
    if given:
        return given
    return secrets.token_urlsafe(24) if beyond_loopback(host) else None
