"""Observability: tracing (OpenTelemetry), metrics (Prometheus) and an audit log for an app.

Each part is imported only when used, with the extra it needs: `accord.observability.tracing`
(`otel`), `accord.observability.metrics` (`metrics`), `accord.observability.audit` (none).
They plug into an app made by `create_app` (its pipeline's hooks, its runtime's executor
seam) and into the client's and webhooks' outbound seam; the core imports none of them
(docs/operations.md).
"""
