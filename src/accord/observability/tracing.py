"""Tracing: an OpenTelemetry span for every operation, refusal and agent run of an app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Tracer, TracerProvider
from starlette.applications import Starlette

from accord.agents.context import RequestContext
from accord.agents.executor import AgentExecutor, EventSink
from accord.core import Inbound, Principal
from accord.core.records import EventRecord
from accord.errors import A2AError
from accord.observability.client_tracing import record_error, trace_clients
from accord.observability.refusals import watch_refusals
from accord.observability.trace_ids import CURRENT_REQUEST
from accord.runtime.watched_calls import CallEnd, WatchedCall
from accord.server.operation_names import operation_of
from accord.server.pipeline import Call, Proceed
from accord.types import Message, Task

INSTRUMENTATION = "accord"
SERVICE = "A2A"
"""`rpc.service` of every span, and the first part of its name (`A2A/send_message`)."""


def tracer_of(provider: TracerProvider | None) -> Tracer:
    """accord's tracer from `provider` (None: the global one, as `OTEL_*` configured it)."""
    from accord import __version__

    return trace.get_tracer(INSTRUMENTATION, __version__, tracer_provider=provider)


class Tracing:
    """Traces an app made by `create_app`: a SERVER span for each operation of every binding
    (continuing the trace its `traceparent` names, HTTP header or gRPC metadata alike), one
    for each request authentication refuses, an INTERNAL span around each agent run (child
    of the operation that started it), a span for each call the runtime makes into its SQL
    store (CLIENT, `db.*`) and its shared bus (PRODUCER, `messaging.*`), child of what was
    current then (the operation, or the run), and, for the whole process, a CLIENT span for each
    call accord's client makes and each webhook POST, which carry the trace on
    (`trace_clients`). An agent calling another agent with accord's client from its run
    therefore continues the same trace.

    Spans name the binding, protocol version, operation, task and context ids, agent and
    caller id (never a credential or message content), the outcome and the A2A error code.
    Install with `Tracing(provider).install(app)`; `provider` None uses the global one.
    """

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        self.tracer_provider = tracer_provider
        self.tracer = tracer_of(tracer_provider)

    def install(self, app: Starlette) -> None:
        """Trace `app`'s operations and runs from now on, and this process's client calls."""
        agent = app.state.service.agent.name
        pipeline = app.state.pipeline
        pipeline.hooks.insert(0, OperationSpans(self.tracer, agent))  # first: sees refusals
        watch_refusals(app, partial(_refusal_span, self.tracer, agent))
        app.state.runtime.wrap_executor(lambda inner: TracedExecutor(inner, self.tracer, agent))
        app.state.runtime.watch_calls(CallSpans(self.tracer))
        trace_clients(self.tracer_provider)


class OperationSpans:
    """The pipeline hook making each operation's SERVER span, current while it runs (so the
    run it starts is its child); a stream's span lasts until the stream ends."""

    def __init__(self, tracer: Tracer, agent: str) -> None:
        self.tracer = tracer
        self.agent = agent

    async def __call__(self, call: Call, proceed: Proceed) -> Any:
        operation = operation_of(call)
        attributes = _request_attributes(call.inbound, self.agent, call.context.principal)
        attributes["rpc.method"] = operation
        attributes["a2a.version"] = str(call.target.version)
        parent = propagate.extract(call.inbound.headers)
        span = self.tracer.start_span(
            f"{SERVICE}/{operation}", parent, SpanKind.SERVER, attributes=attributes
        )
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        request = CURRENT_REQUEST.get()
        if request is not None:  # for the access line, logged once the span is no longer current
            ids = span.get_span_context()
            request.ids = (f"{ids.trace_id:032x}", f"{ids.span_id:016x}")
        try:
            result = await proceed()
        except BaseException as exc:
            _failed(span, exc)
            span.end()
            raise
        finally:
            otel_context.detach(token)
        if call.target.method.streaming:
            return _spanned_stream(span, result)
        _note_ids(span, result)
        span.set_attribute("a2a.outcome", "ok")
        span.end()
        return result


class TracedExecutor(AgentExecutor):
    """The agent's executor, each run and cancel in an INTERNAL span."""

    def __init__(self, inner: AgentExecutor, tracer: Tracer, agent: str) -> None:
        self.inner = inner
        self.tracer = tracer
        self.agent = agent
        self.restartable = inner.restartable

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        with self.tracer.start_as_current_span(
            f"{SERVICE}/agent run", attributes=self._attributes(context)
        ):
            await self.inner.execute(context, events)

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        with self.tracer.start_as_current_span(
            f"{SERVICE}/agent cancel", attributes=self._attributes(context)
        ):
            await self.inner.cancel(context, events)

    def _attributes(self, context: RequestContext) -> dict[str, str]:
        return {
            "a2a.agent": self.agent,
            "a2a.task_id": context.task_id,
            "a2a.context_id": context.context_id,
        }


BUS_DESTINATIONS = {"publish": "task_records", "request_cancel": "task_cancels"}
"""What each bus operation goes to, as `messaging.destination.name` (a task's own stream is
`a2a.task_id`)."""


class CallSpans:
    """A span for each call into the store or the bus, after OpenTelemetry's conventions for
    database clients and messaging producers (a save's span lasts until it is committed)."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    def started(self, call: WatchedCall) -> CallEnd:
        attributes: dict[str, Any]
        if call.component == "store":
            name, kind = call.operation, SpanKind.CLIENT
            attributes = {"db.system": call.system, "db.operation": call.operation}
        else:
            destination = BUS_DESTINATIONS.get(call.operation, call.operation)
            name, kind = f"{call.operation} {destination}", SpanKind.PRODUCER
            attributes = {
                "messaging.system": call.system,
                "messaging.operation": "publish",
                "messaging.operation.name": call.operation,
                "messaging.destination.name": destination,
            }
        if call.task_id is not None:
            attributes["a2a.task_id"] = call.task_id
        span = self.tracer.start_span(name, kind=kind, attributes=attributes)
        return partial(_end_call, span)


def _end_call(span: Span, error: BaseException | None) -> None:
    if error is not None:
        record_error(span, error)
    span.end()


def _refusal_span(tracer: Tracer, agent: str, inbound: Inbound, error: A2AError) -> None:
    """A SERVER span for a request authentication refused."""
    attributes = _request_attributes(inbound, agent, None)
    parent = propagate.extract(inbound.headers)
    span = tracer.start_span(
        f"{SERVICE}/authenticate", parent, SpanKind.SERVER, attributes=attributes
    )
    _failed(span, error)
    span.end()


def _request_attributes(
    inbound: Inbound, agent: str, principal: Principal | None
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "rpc.system": "a2a",
        "rpc.service": SERVICE,
        "a2a.binding": inbound.binding,
        "a2a.wire_method": inbound.method,
        "a2a.agent": agent,
    }
    if inbound.peer:
        attributes["network.peer.address"] = inbound.peer
    if principal is not None and principal.scheme is not None:
        attributes["enduser.id"] = principal.id
    if inbound.tenant:
        attributes["a2a.tenant"] = inbound.tenant
    return attributes


def _failed(span: Span, exc: BaseException) -> None:
    span.set_attribute("a2a.outcome", "error" if isinstance(exc, A2AError) else "failure")
    record_error(span, exc)


def _note_ids(span: Span, result: Any) -> None:
    if isinstance(result, Task):
        span.set_attribute("a2a.task_id", result.id)
        span.set_attribute("a2a.context_id", result.context_id)
    elif isinstance(result, Message):
        if result.task_id:
            span.set_attribute("a2a.task_id", result.task_id)
        if result.context_id:
            span.set_attribute("a2a.context_id", result.context_id)


async def _spanned_stream(span: Span, records: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """`records`, `span` ending with them (the outcome the stream's end says)."""
    seen = 0
    try:
        async for record in records:
            if seen == 0 and isinstance(record, EventRecord):
                span.set_attribute("a2a.task_id", record.task_id)
            seen += 1
            yield record
    except GeneratorExit:  # the caller went away
        span.set_attribute("a2a.outcome", "closed")
        raise
    except BaseException as exc:
        _failed(span, exc)
        raise
    else:
        span.set_attribute("a2a.outcome", "ok")
    finally:
        span.set_attribute("a2a.stream.events", seen)
        span.end()
