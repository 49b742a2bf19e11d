"""The seam observability plugs into on the requests accord makes: client calls, webhook POSTs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Protocol

TRACE_HEADERS = ("traceparent", "tracestate", "baggage")
"""The W3C Trace Context and Baggage headers: what carries a trace from one call to the next."""


def trace_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The trace context `headers` carry (HTTP headers or gRPC metadata), to pass on as is."""
    found = {}
    for name in TRACE_HEADERS:
        value = headers.get(name)
        if value:
            found[name] = value
    return found


@dataclass(slots=True)
class OutboundRequest:
    """One request accord is making, as observers see it: `kind` (`push`), where it goes, the
    trace context it continues when that is not the current one (`parent`: a webhook
    delivery's, saved with its event), the `headers` observers add to it (the trace context),
    and the HTTP `status` it got."""

    kind: str
    url: str
    parent: Mapping[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    status: int | None = None


class OutboundObserver(Protocol):
    """Watches the requests accord makes (tracing, metrics)."""

    def request(self, request: OutboundRequest) -> AbstractContextManager[None]:
        """A context around one request (a span, a timer); it may add `request.headers`."""
        ...

    def inject(self, headers: dict[str, str]) -> None:
        """Add the trace context of the moment to the headers of a request about to go."""
        ...


_observers: list[OutboundObserver] = []


def observe(observer: OutboundObserver) -> None:
    """Have `observer` watch every outbound request of this process from now on."""
    if observer not in _observers:
        _observers.append(observer)


def forget(observer: OutboundObserver) -> None:
    """Stop `observer` watching."""
    if observer in _observers:
        _observers.remove(observer)


def inject(headers: dict[str, str]) -> None:
    """Add to `headers` what the observers carry on a request (nothing when none watches)."""
    for observer in _observers:
        observer.inject(headers)


@contextmanager
def outbound_request(
    kind: str,
    url: str,
    watchers: Sequence[OutboundObserver] = (),
    parent: Mapping[str, str] | None = None,
) -> Iterator[OutboundRequest]:
    """A request about to go to `url`, watched by the process's observers and `watchers`
    (those of one sender: an app's metrics), continuing the trace `parent` names (default:
    the current one): send it with its `headers` added, and set its `status` once answered."""
    request = OutboundRequest(kind, url, parent or {})
    if not _observers and not watchers:
        yield request
        return
    with ExitStack() as stack:
        for observer in (*_observers, *watchers):
            stack.enter_context(observer.request(request))
        yield request
