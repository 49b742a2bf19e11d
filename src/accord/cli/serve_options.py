"""`accord serve`'s options for TLS (mutual TLS too), abuse limits, the public URL and the
allowed hosts."""

from __future__ import annotations

from typing import Annotated

import typer

from accord.cli.errors import BadArgument
from accord.cli.storage import parse_duration
from accord.server.limits import Limits
from accord.server.public_url import check_public_url
from accord.server.tls import TlsFiles
from accord.web.allowed_hosts import AllowedHosts

TlsCert = Annotated[
    str | None,
    typer.Option(
        metavar="FILE",
        help="Serve HTTPS (and gRPC over TLS) with this certificate (PEM).",
        show_default=False,
    ),
]
TlsKey = Annotated[
    str | None,
    typer.Option(metavar="FILE", help="The key of --tls-cert (PEM).", show_default=False),
]
TlsClientCa = Annotated[
    str | None,
    typer.Option(
        metavar="FILE",
        help="Verify client certificates against this CA bundle (mutual TLS).",
        show_default=False,
    ),
]
RateLimitOption = Annotated[
    str | None,
    typer.Option(
        metavar="N",
        help="Requests per second per caller (off: none) [default: 50 if secured].",
        show_default=False,
    ),
]
MaxStreams = Annotated[
    str | None,
    typer.Option(
        metavar="N",
        help="Open streams per caller (off: none) [default: 32 if secured].",
        show_default=False,
    ),
]
MaxActiveTasks = Annotated[
    str | None,
    typer.Option(
        metavar="N",
        help="Tasks at work per caller (off: none) [default: 32 if secured].",
        show_default=False,
    ),
]
RequestTimeoutOption = Annotated[
    str | None,
    typer.Option(
        metavar="DURATION",
        help="Longest a request may take (30s, 5m; off) [default: 5m if secured].",
        show_default=False,
    ),
]

PublicUrlOption = Annotated[
    str | None,
    typer.Option(
        metavar="URL",
        envvar="ACCORD_PUBLIC_URL",
        help="The URL clients reach the agent at (behind a proxy or load balancer): its card's"
        " interfaces, the signed card's jku and push notifications' issuer name it"
        " [default: the URL each request came in at].",
        show_default=False,
    ),
]


AllowedHostOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allowed-host",
        metavar="NAME",
        help="Answer requests for this Host besides the loopback names at --port (repeatable):"
        " a name or address, with :PORT to allow only that port, .example.com for a domain and"
        " its subdomains, * for any (for an agent, a caller then chooses the URLs its signed"
        " card names). Other Hosts get 400, so no page rebinding a name to this machine reaches"
        " it [an agent with --public-url answers any Host unless this is given].",
        show_default=False,
    ),
]


def allowed_hosts(patterns: list[str] | None) -> AllowedHosts | None:
    """The hosts the options allow (None: none given), each pattern checked."""
    if not patterns:
        return None
    try:
        return AllowedHosts(patterns)
    except ValueError as exc:
        raise BadArgument(f"--allowed-host: {exc}") from None


def public_url(text: str | None) -> str | None:
    """The public URL the option gives, checked (`check_public_url`)."""
    if text is None:
        return None
    try:
        return check_public_url(text, "--public-url")
    except ValueError as exc:
        raise BadArgument(str(exc)) from None


def tls_files(cert: str | None, key: str | None, client_ca: str | None) -> TlsFiles | None:
    """The TLS files the options name (None: plain HTTP)."""
    if cert is None:
        if key is not None or client_ca is not None:
            raise BadArgument("--tls-key and --tls-client-ca go with --tls-cert")
        return None
    if key is None:
        raise BadArgument("--tls-cert needs --tls-key")
    return TlsFiles(cert, key, client_ca)


def limits(
    rate: str | None, streams: str | None, tasks: str | None, timeout: str | None
) -> Limits | None:
    """The limits the options set (the others at their defaults); None when none is given,
    leaving the agent's default (Limits() for an agent declaring security)."""
    if rate is None and streams is None and tasks is None and timeout is None:
        return None
    default = Limits()
    seconds = parse_duration("--request-timeout", timeout) if timeout is not None else None
    return Limits(
        requests_per_second=_number("--rate-limit", rate, default.requests_per_second),
        streams_per_caller=_count("--max-streams", streams, default.streams_per_caller),
        tasks_per_caller=_count("--max-active-tasks", tasks, default.tasks_per_caller),
        request_timeout=(
            default.request_timeout
            if timeout is None
            else seconds.total_seconds()
            if seconds is not None
            else None
        ),
    )


def _number(option: str, text: str | None, default: float | None) -> float | None:
    if text is None:
        return default
    if text == "off":
        return None
    try:
        value = float(text)
    except ValueError:
        raise BadArgument(f"{option} must be a number or off, got {text!r}") from None
    if value <= 0:
        raise BadArgument(f"{option} must be positive (or off)")
    return value


def _count(option: str, text: str | None, default: int | None) -> int | None:
    value = _number(option, text, default)
    if value is not None and value != int(value):
        raise BadArgument(f"{option} must be a whole number or off, got {text!r}")
    return None if value is None else int(value)
