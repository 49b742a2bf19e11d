"""The commands that run servers: `accord serve` and `accord db`."""

from __future__ import annotations

from typing import Annotated

import typer

from accord.agents.agent import DEFAULT_PORT
from accord.cli import observability_options, serve_options, storage
from accord.cli import serve as serving
from accord.cli.errors import BadArgument, reports_errors
from accord.cli.push_options import (
    PushBackoff,
    PushBackoffMax,
    PushDeadline,
    PushTries,
    retry_schedule,
)
from accord.cli.signing_options import KeysDirOption, PushAllowOption
from accord.cli.workers import worker_count
from accord.keys import DEFAULT_KEYS_DIR
from accord.runtime import DEFAULT_BUS_URL
from accord.runtime.replicas import HANDOVER_TIMEOUT
from accord.server.config import ServerConfig
from accord.server.http_limits import HttpLimits
from accord.store import Retention
from accord.store.retention import (
    DEFAULT_CLEANUP_INTERVAL,
    DEFAULT_EVENT_TTL,
    DEFAULT_FINISHED_TASK_TTL,
    DEFAULT_MAX_EVENTS_PER_TASK,
)

StoreUrl = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="URL",
        envvar="ACCORD_STORE",
        help="Where tasks live: sqlite:///PATH (a file on this machine), postgresql://USER@HOST/DB"
        " (shared by replicas) or memory (gone when the server stops).",
        show_default=False,
    ),
]

# The defaults of the options, as --help shows them.
_TASK_TTL = storage.format_duration(DEFAULT_FINISHED_TASK_TTL)
_EVENT_TTL = storage.format_duration(DEFAULT_EVENT_TTL)
_CLEANUP_INTERVAL = storage.format_duration(DEFAULT_CLEANUP_INTERVAL)
_HANDOVER_TIMEOUT = storage.format_duration(HANDOVER_TIMEOUT)
_MAX_CONNECTIONS = HttpLimits().max_connections

app = typer.Typer()
db = typer.Typer(help="Manage the database of the task store.", no_args_is_help=True)


@app.command()
@reports_errors
def serve(
    target: Annotated[
        str,
        typer.Argument(
            metavar="MODULE:ATTRIBUTE", help="The accord.Agent or ASGI app to serve, by name."
        ),
    ],
    host: Annotated[
        str, typer.Option(metavar="HOST", help="Interface to listen on.")
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            metavar="PORT", envvar="ACCORD_PORT", min=0, max=65535, help="Port to listen on."
        ),
    ] = DEFAULT_PORT,
    log_level: Annotated[str, typer.Option(metavar="LEVEL", help="uvicorn's log level.")] = "info",
    workers: serve_options.WorkersOption = "1",
    store: StoreUrl = None,
    store_agent: serve_options.StoreAgentOption = None,
    task_ttl: serve_options.TaskTtlOption = _TASK_TTL,
    event_ttl: serve_options.EventTtlOption = _EVENT_TTL,
    max_task_events: serve_options.MaxTaskEventsOption = DEFAULT_MAX_EVENTS_PER_TASK,
    cleanup_interval: serve_options.CleanupIntervalOption = _CLEANUP_INTERVAL,
    store_pool: serve_options.StorePoolOption = None,
    bus: serve_options.BusOption = DEFAULT_BUS_URL,
    runner_ttl: serve_options.RunnerTtlOption = "15s",
    handover_timeout: serve_options.HandoverTimeoutOption = _HANDOVER_TIMEOUT,
    graceful_timeout: serve_options.GracefulTimeoutOption = "10s",
    grpc_port: serve_options.GrpcPortOption = None,
    tls_cert: serve_options.TlsCert = None,
    tls_key: serve_options.TlsKey = None,
    tls_client_ca: serve_options.TlsClientCa = None,
    rate_limit: serve_options.RateLimitOption = None,
    max_streams: serve_options.MaxStreams = None,
    max_active_tasks: serve_options.MaxActiveTasks = None,
    request_timeout: serve_options.RequestTimeoutOption = None,
    max_connections: serve_options.MaxConnectionsOption = _MAX_CONNECTIONS,
    header_timeout: serve_options.HeaderTimeoutOption = "10s",
    body_timeout: serve_options.BodyTimeoutOption = "60s",
    debug: serve_options.DebugOption = False,
    keys: KeysDirOption = DEFAULT_KEYS_DIR,
    push_allow: PushAllowOption = None,
    public_url: serve_options.PublicUrlOption = None,
    allowed_host: serve_options.AllowedHostOption = None,
    # How webhook deliveries are retried (accord.runtime.delivery.RetrySchedule).
    push_tries: PushTries = None,
    push_backoff: PushBackoff = None,
    push_backoff_max: PushBackoffMax = None,
    push_deadline: PushDeadline = None,
    metrics: observability_options.MetricsOption = False,
    metrics_port: observability_options.MetricsPortOption = None,
    audit_log: observability_options.AuditLogOption = None,
    log_format: observability_options.LogFormatOption = "text",
) -> None:
    """Serve an agent over A2A.

    JSON-RPC answers at /, HTTP+JSON beside it, and the agent card where clients look for
    it. Tasks persist in the agent's own SQLite file, ./.accord/NAME.db, unless --store
    names another store (one keeping another agent's tasks is refused). A port already
    taken is reported before serving.
    Behind a proxy or load balancer, --public-url says where clients reach the agent.

    Without --public-url, every URL the agent publishes is made from the Host of the
    request, so it answers only the Host names --allowed-host gives (by default its
    loopback names at --port, and --host).
    """
    options = dict(locals())
    del options["target"]
    serving.run(target, *served_as(**options))


def served_as(
    *,
    host: str,
    port: int,
    log_level: str,
    store: StoreUrl,
    store_agent: serve_options.StoreAgentOption,
    task_ttl: serve_options.TaskTtlOption,
    event_ttl: serve_options.EventTtlOption,
    max_task_events: serve_options.MaxTaskEventsOption,
    cleanup_interval: serve_options.CleanupIntervalOption,
    store_pool: serve_options.StorePoolOption,
    bus: serve_options.BusOption,
    runner_ttl: serve_options.RunnerTtlOption,
    handover_timeout: serve_options.HandoverTimeoutOption,
    graceful_timeout: serve_options.GracefulTimeoutOption,
    grpc_port: serve_options.GrpcPortOption,
    tls_cert: serve_options.TlsCert,
    tls_key: serve_options.TlsKey,
    tls_client_ca: serve_options.TlsClientCa,
    rate_limit: serve_options.RateLimitOption,
    max_streams: serve_options.MaxStreams,
    max_active_tasks: serve_options.MaxActiveTasks,
    request_timeout: serve_options.RequestTimeoutOption,
    max_connections: serve_options.MaxConnectionsOption,
    header_timeout: serve_options.HeaderTimeoutOption,
    body_timeout: serve_options.BodyTimeoutOption,
    debug: serve_options.DebugOption,
    keys: KeysDirOption,
    push_allow: PushAllowOption,
    public_url: serve_options.PublicUrlOption,
    allowed_host: serve_options.AllowedHostOption,
    push_tries: PushTries,
    push_backoff: PushBackoff,
    push_backoff_max: PushBackoffMax,
    push_deadline: PushDeadline,
    workers: serve_options.WorkersOption,
    metrics: observability_options.MetricsOption,
    metrics_port: observability_options.MetricsPortOption,
    audit_log: observability_options.AuditLogOption,
    log_format: observability_options.LogFormatOption,
) -> tuple[serving.ServeSettings, ServerConfig]:
    """The process's settings and the app's config that `accord serve`'s options say (every
    command serving an agent takes them: `accord gateway` too)."""
    interval = storage.parse_duration("--cleanup-interval", cleanup_interval)
    config = serve_options.server_config(
        public_url=public_url,
        allowed_hosts=allowed_host or None,
        runner_ttl=_seconds("--runner-ttl", runner_ttl),
        handover_timeout=_seconds("--handover-timeout", handover_timeout),
        cleanup_interval=interval.total_seconds() if interval is not None else None,
        grpc_port=grpc_port,
        tls=serve_options.tls_files(tls_cert, tls_key, tls_client_ca),
        limits=serve_options.limits(rate_limit, max_streams, max_active_tasks, request_timeout),
        debug=debug,
        push_allow=push_allow or (),
        push_schedule=retry_schedule(push_tries, push_backoff, push_backoff_max, push_deadline),
        store_agent=store_agent,
    )
    settings = serving.ServeSettings(
        host,
        port,
        log_level,
        storage.StoreSettings(
            url=store,
            retention=Retention(
                finished_task_ttl=storage.parse_duration("--task-ttl", task_ttl),
                event_ttl=storage.parse_duration("--event-ttl", event_ttl),
                max_events_per_task=max_task_events,
            ),
            pool_size=store_pool,
        ),
        bus_url=bus,
        graceful_timeout=_seconds("--graceful-timeout", graceful_timeout),
        http_limits=HttpLimits(
            header_timeout=_seconds("--header-timeout", header_timeout),
            body_timeout=_seconds("--body-timeout", body_timeout),
            max_connections=max_connections,
        ),
        keys_dir=keys,
        workers=worker_count(workers),
        observability=observability_options.ObservabilitySettings(
            metrics, metrics_port, audit_log, log_format
        ),
    )
    return settings, config


def _seconds(option: str, text: str) -> float:
    duration = storage.parse_duration(option, text)
    if duration is None:
        raise BadArgument(f"{option} cannot be off")
    return duration.total_seconds()


@db.command("upgrade")
@reports_errors
def db_upgrade(store: StoreUrl = None) -> None:
    """Create or upgrade the task store's schema.

    accord serve also does this when it starts. Without --store: the one store ./.accord holds.
    """
    typer.echo(storage.upgrade_schema(storage.named_store(store)))
