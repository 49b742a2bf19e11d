"""`accord serve`'s options for TLS (mutual TLS too), abuse limits, the public URL and the
allowed hosts."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from accord.cli.errors import BadArgument
from accord.cli.storage import parse_duration
from accord.server.config import ServerConfig, ServerConfigError
from accord.server.limits import Limits
from accord.server.tls import TlsFiles

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


_OPTION_OF = {
    "public_url": "--public-url",
    "allowed_hosts": "--allowed-host",
    "push_allow": "--push-allow",
    "grpc_port": "--grpc-port",
    "http_port": "--port",
    "runner_ttl": "--runner-ttl",
    "handover_timeout": "--handover-timeout",
    "cleanup_interval": "--cleanup-interval",
}
"""The option that sets each ServerConfig setting, named in its errors."""


def server_config(**settings: Any) -> ServerConfig:
    """The ServerConfig of the options' settings; one that cannot be is BadArgument naming
    its option."""
    try:
        return ServerConfig(**settings)
    except ServerConfigError as exc:
        message, option = str(exc), _OPTION_OF.get(exc.field)
        if option is not None and message.startswith(exc.field):
            message = option + message.removeprefix(exc.field)
        raise BadArgument(message) from None


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
