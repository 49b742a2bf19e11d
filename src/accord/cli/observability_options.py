"""`accord serve`'s observability: metrics, the audit log and JSON logs by option, tracing by
the standard `OTEL_*` environment variables (docs/operations.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from accord.cli.errors import BadArgument
from accord.cli.log_config import log_config

MetricsOption = Annotated[
    bool,
    typer.Option(
        "--metrics",
        help="Serve Prometheus metrics at /metrics (on the agent's port unless --metrics-port).",
    ),
]
MetricsPortOption = Annotated[
    int | None,
    typer.Option(
        metavar="PORT",
        help="Serve the metrics on this port of --host instead (implies --metrics).",
        show_default=False,
    ),
]
AuditLogOption = Annotated[
    str | None,
    typer.Option(
        metavar="FILE",
        help="Append a JSON line per operation and refused request to FILE (-: stdout).",
        show_default=False,
    ),
]
LogFormatOption = Annotated[
    str,
    typer.Option(metavar="FORMAT", help="text, or json: a JSON object a line, with trace ids."),
]
LOG_FORMATS = ("text", "json")


@dataclass(frozen=True, slots=True)
class ObservabilitySettings:
    """What `accord serve` adds to an agent's app: metrics (on its port, or `metrics_port`),
    the audit log (a file, "-" for stdout), the log format; tracing when `OTEL_*` ask."""

    metrics: bool = False
    metrics_port: int | None = None
    audit_log: str | None = None
    log_format: str = "text"

    def __post_init__(self) -> None:
        if self.log_format not in LOG_FORMATS:
            raise BadArgument(f"--log-format must be text or json, got {self.log_format!r}")

    def agent_only(self) -> str:
        """The options given that only an agent's app takes ("" when none is)."""
        given = [
            ("--metrics", self.metrics),
            ("--metrics-port", self.metrics_port is not None),
            ("--audit-log", self.audit_log is not None),
        ]
        return " and ".join(name for name, on in given if on)


def observe(app: Any, settings: ObservabilitySettings, host: str, agent_name: str) -> list[str]:
    """Install on `app` what `settings` and the environment ask for; lines saying where."""
    from accord.observability.environment import tracing_asked

    said = []
    # Installed last, tracing's hook runs first: the others' lines then name its trace.
    if settings.audit_log is not None:
        from accord.observability.audit import AuditLog

        try:
            AuditLog(settings.audit_log).install(app)
        except OSError as exc:
            raise BadArgument(f"--audit-log: {exc}") from None
        said.append(f"audit log to {'stdout' if settings.audit_log == '-' else settings.audit_log}")
    if settings.metrics or settings.metrics_port is not None:
        _needs("prometheus_client", "--metrics", "metrics")
        from accord.observability.metrics import Metrics, serve_metrics

        metrics = Metrics()
        metrics.install(app, route=settings.metrics_port is None)
        if settings.metrics_port is not None:
            server = serve_metrics(metrics, settings.metrics_port, host)
            said.append(f"metrics at http://{host}:{server.server_port}/metrics")
        else:
            said.append("metrics at /metrics")
    if tracing_asked(os.environ):
        _needs("opentelemetry.sdk", "tracing (OTEL_* variables)", "otel")
        from accord.observability.otel_setup import tracing_from_environment

        try:
            tracing_from_environment(agent_name).install(app)
        except ValueError as exc:
            raise BadArgument(str(exc)) from None
        if settings.log_format == "json":  # the access line names the request's span too
            from accord.observability.trace_ids import RequestTraceScope

            app.add_middleware(RequestTraceScope)
        exporter = os.environ.get("OTEL_TRACES_EXPORTER", "otlp")
        said.append(f"tracing, exported as OTEL_TRACES_EXPORTER says ({exporter})")
    return said


def logging_options(settings: ObservabilitySettings, log_level: str) -> dict[str, Any]:
    """uvicorn's `log_config` and `access_log` for the log format: JSON logs include the
    access log."""
    config = log_config(log_level)
    if settings.log_format != "json":
        return {"log_config": config, "access_log": False}
    from accord.observability.json_logs import json_log_config

    return {"log_config": json_log_config(config), "access_log": True}


def _needs(module: str, what: str, extra: str) -> None:
    from importlib.util import find_spec

    if find_spec(module.partition(".")[0]) is None or find_spec(module) is None:
        raise BadArgument(f"{what} needs the {extra} extra: pip install 'accord[{extra}]'")
