"""Whether the standard `OTEL_*` environment variables ask for traces (importing nothing)."""

from __future__ import annotations

from collections.abc import Mapping

ASKING = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def tracing_asked(environ: Mapping[str, str]) -> bool:
    """True when `OTEL_TRACES_EXPORTER` names an exporter (not `none`) or an OTLP endpoint is
    set, unless `OTEL_SDK_DISABLED` is true."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters:
        return exporters != "none"
    return any(environ.get(name) for name in ASKING)
