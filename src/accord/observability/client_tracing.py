"""Client tracing: a CLIENT span for each call of accord's client and each webhook POST."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import urlsplit

from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from accord.client.transports import TRANSPORT_WRAPPERS, IdentifiedEvents, Transport
from accord.codecs.base import ClientCall
from accord.core import outbound
from accord.core.outbound import OutboundRequest
from accord.errors import A2AError
from accord.types import StreamEvent

P = TypeVar("P")
R = TypeVar("R")


def trace_clients(tracer_provider: TracerProvider | None = None) -> None:
    """Trace every client call and webhook POST of this process from now on, with a tracer of
    `tracer_provider` (None: the global one); calling again changes the provider."""
    from accord.observability.tracing import tracer_of

    _TRACING.tracer = tracer_of(tracer_provider)
    if _TRACING.wrap not in TRANSPORT_WRAPPERS:
        TRANSPORT_WRAPPERS.append(_TRACING.wrap)
    outbound.observe(_TRACING)


def untrace_clients() -> None:
    """Stop what `trace_clients` started."""
    if _TRACING.wrap in TRANSPORT_WRAPPERS:
        TRANSPORT_WRAPPERS.remove(_TRACING.wrap)
    outbound.forget(_TRACING)


class _ClientTracing:
    """The process's client tracing: wraps transports, watches webhook POSTs."""

    def __init__(self) -> None:
        self.tracer = trace.get_tracer("accord")

    def wrap(self, transport: Transport) -> Transport:
        return TracedTransport(transport, self)

    @contextmanager
    def request(self, request: OutboundRequest) -> Iterator[None]:
        attributes = {"http.request.method": "POST", "url.full": _without_query(request.url)}
        name = f"A2A/{request.kind}"
        # A webhook POST is a child of the run that recorded its event, not a link from a
        # trace of its own: it has that one cause, and then the whole path from the request to
        # the receiver is one trace (each retry a sibling, however late it comes).
        parent = propagate.extract(request.parent) if request.parent else None
        with self.tracer.start_as_current_span(
            name, parent, SpanKind.CLIENT, attributes=attributes, record_exception=False
        ) as span:
            propagate.inject(request.headers)
            try:
                yield
            except BaseException as exc:
                span.set_attribute("error.type", type(exc).__name__)
                span.set_status(Status(StatusCode.ERROR))
                raise
            if request.status is not None:
                span.set_attribute("http.response.status_code", request.status)
                if request.status >= 400:
                    span.set_status(Status(StatusCode.ERROR))

    def inject(self, headers: dict[str, str]) -> None:
        propagate.inject(headers)


_TRACING = _ClientTracing()


class TracedTransport(Transport):
    """A transport whose every call and stream runs in a CLIENT span, current while it goes
    out (so the request's `traceparent` names it)."""

    def __init__(self, inner: Transport, tracing: _ClientTracing) -> None:
        self.inner = inner
        self.interface = inner.interface
        self.codec = inner.codec
        self._tracing = tracing

    async def call(self, call: ClientCall[P, R], params: P) -> R:
        with self._span(call.name) as span:
            try:
                return await self.inner.call(call, params)
            except BaseException as exc:
                record_error(span, exc)
                raise

    def stream(
        self, call: ClientCall[P, StreamEvent], params: P, last_event_id: int | None = None
    ) -> IdentifiedEvents:
        return self._stream(call, params, last_event_id)

    async def _stream(
        self, call: ClientCall[P, StreamEvent], params: P, last_event_id: int | None
    ) -> IdentifiedEvents:
        span = self._tracing.tracer.start_span(
            f"A2A/{call.name}", kind=SpanKind.CLIENT, attributes=self._attributes(call.name)
        )
        events = self.inner.stream(call, params, last_event_id)
        try:
            while True:
                # Current only while the next event is awaited: the request goes out then.
                with trace.use_span(span, record_exception=False, set_status_on_exception=False):
                    try:
                        item = await anext(events)
                    except StopAsyncIteration:
                        return
                yield item
        except GeneratorExit:
            raise
        except BaseException as exc:
            record_error(span, exc)
            raise
        finally:
            await events.aclose()
            span.end()

    async def aclose(self) -> None:
        await self.inner.aclose()

    @contextmanager
    def _span(self, method: str) -> Iterator[Span]:
        with self._tracing.tracer.start_as_current_span(
            f"A2A/{method}",
            kind=SpanKind.CLIENT,
            attributes=self._attributes(method),
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            yield span

    def _attributes(self, method: str) -> dict[str, Any]:
        url = urlsplit(self.interface.url)
        attributes: dict[str, Any] = {
            "rpc.system": "a2a",
            "rpc.service": "A2A",
            "rpc.method": method,
            "a2a.binding": self.interface.transport,
            "a2a.version": str(self.codec.version),
            "url.full": _without_query(self.interface.url),
        }
        if url.hostname:
            attributes["server.address"] = url.hostname
        if url.port:
            attributes["server.port"] = url.port
        return attributes


def record_error(span: Span, exc: BaseException) -> None:
    """Mark `span` failed by `exc`: its type, and the A2A error's code and message (the
    message of any other exception may hold anything: it is not recorded)."""
    span.set_attribute("error.type", type(exc).__name__)
    if isinstance(exc, A2AError):
        span.set_attribute("a2a.error_code", exc.code)
        span.set_status(Status(StatusCode.ERROR, exc.message))
    else:
        span.set_status(Status(StatusCode.ERROR))


def _without_query(url: str) -> str:
    """`url` without its query and fragment, where a credential might hide."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return f"{parts.scheme}://{netloc}{parts.path}"
