"""`accord serve`'s options (but for signing and push) and the ServerConfig made of them."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from accord.cli.errors import BadArgument
from accord.cli.storage import parse_duration
from accord.server.config import ServerConfig, ServerConfigError
from accord.server.limits import Limits
from accord.server.tls import TlsFiles
from accord.store.pools import MAX_OVERFLOW, POOL_SIZE, POSTGRES_POOL_SIZE

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
        help="Answer requests for this Host besides the loopback names and --host's address at"
        " --port (repeatable):"
        " a name or address, with :PORT to allow only that port, .example.com for a domain and"
        " its subdomains, * for any (for an agent, a caller then chooses the URLs its signed"
        " card names). Other Hosts get 400, so no page rebinding a name to this machine reaches"
        " it [an agent with --public-url answers any Host unless this is given].",
        show_default=False,
    ),
]


# The options of the store, the replicas, the connections and development.

WorkersOption = Annotated[
    str,
    typer.Option(
        metavar="N",
        envvar="ACCORD_WORKERS",
        help="Server processes sharing the port (auto: one per core). They share the store"
        " and, unless --bus names Redis, pass their events through a hub of their own, so a"
        " request may reach any of them; one that dies is started again.",
    ),
]

StoreAgentOption = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        envvar="ACCORD_STORE_AGENT",
        help="The agent name the store keeps tasks under (default: the agent's own). A"
        " store keeping another name's tasks is refused: give an earlier name only to hand"
        " its tasks on to this agent on purpose.",
        show_default=False,
    ),
]
TaskTtlOption = Annotated[
    str,
    typer.Option(
        metavar="DURATION",
        help="Keep finished tasks this long (30s, 15m, 12h, 7d; off: forever).",
    ),
]
EventTtlOption = Annotated[
    str,
    typer.Option(
        metavar="DURATION",
        help="Keep logged task events this long (off: as long as the task).",
    ),
]
MaxTaskEventsOption = Annotated[
    int, typer.Option(min=1, metavar="N", help="Keep at most this many recent events per task.")
]
CleanupIntervalOption = Annotated[
    str,
    typer.Option(
        metavar="DURATION", help="How often to forget expired tasks and events (off: never)."
    ),
]
StorePoolOption = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        min=1,
        help="Open at most N connections to a SQL store (replicas times N must fit PostgreSQL's"
        f" max_connections) [default: {POSTGRES_POOL_SIZE} on PostgreSQL, {POOL_SIZE}"
        f" (+{MAX_OVERFLOW} under load) on SQLite].",
        show_default=False,
    ),
]
BusOption = Annotated[
    str,
    typer.Option(
        metavar="URL",
        envvar="ACCORD_BUS",
        help="Event bus: memory (one server) or redis://host:6379/0 (several replicas).",
    ),
]
RunnerTtlOption = Annotated[
    str,
    typer.Option(
        metavar="DURATION", help="A replica silent this long has its running tasks taken over."
    ),
]
HandoverTimeoutOption = Annotated[
    str,
    typer.Option(
        metavar="DURATION",
        help="A cancel for a task another replica runs waits this long for it, then cancels"
        " the task here.",
    ),
]
GracefulTimeoutOption = Annotated[
    str,
    typer.Option(
        metavar="DURATION", help="On SIGTERM, wait this long for open requests and streams."
    ),
]
GrpcPortOption = Annotated[
    int | None,
    typer.Option(
        metavar="PORT",
        help="Also serve A2A over gRPC (1.0 and 0.3) on this port (grpc extra).",
        show_default=False,
    ),
]
MaxConnectionsOption = Annotated[
    int,
    typer.Option(metavar="N", min=1, help="Refuse connections past this many (503)."),
]
HeaderTimeoutOption = Annotated[
    str,
    typer.Option(metavar="DURATION", help="A request's headers must arrive in this time."),
]
BodyTimeoutOption = Annotated[
    str,
    typer.Option(metavar="DURATION", help="A request's body must arrive in this time."),
]
DebugOption = Annotated[
    bool, typer.Option(help="Tell callers the agent's and server's errors (development).")
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
