"""The OpenTelemetry SDK set up from the standard `OTEL_*` environment variables."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)

from accord.observability.tracing import Tracing


def tracing_from_environment(
    service_name: str, environ: Mapping[str, str] | None = None
) -> Tracing:
    """Tracing with a global tracer provider exporting as `OTEL_TRACES_EXPORTER` says
    (`otlp`, the default, over `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` or `grpc`;
    `console`: each span as JSON on stdout; comma-separated for several). The resource is
    `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`, the service name `service_name`
    unless they name one; the OTLP endpoint, headers and the sampler are read by the SDK
    itself from their `OTEL_*` variables."""
    env = os.environ if environ is None else environ
    attributes = {} if env.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service_name}
    provider = TracerProvider(resource=Resource.create(attributes))
    names = env.get("OTEL_TRACES_EXPORTER", "otlp") or "otlp"
    for name in (part.strip().lower() for part in names.split(",")):
        if name == "console":  # at once: a reader is watching
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stdout)))
        elif name == "otlp":
            provider.add_span_processor(BatchSpanProcessor(_otlp(env)))
        elif name != "none":
            raise ValueError(f"OTEL_TRACES_EXPORTER: unknown exporter {name!r} (otlp, console)")
    trace.set_tracer_provider(provider)
    return Tracing(provider)


def _otlp(env: Mapping[str, str]) -> SpanExporter:
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    elif protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[assignment]
            OTLPSpanExporter,
        )
    else:
        raise ValueError(f"OTEL_EXPORTER_OTLP_PROTOCOL: {protocol!r} (http/protobuf, grpc)")
    return OTLPSpanExporter()
