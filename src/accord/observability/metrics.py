"""Metrics: Prometheus counters, gauges and histograms of one app, in a registry of its own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any
from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from accord.agents.context import RequestContext
from accord.agents.executor import AgentEvent, AgentExecutor, EventSink
from accord.core import Inbound
from accord.core.outbound import OutboundRequest
from accord.errors import A2AError, RateLimited
from accord.observability.refusals import watch_refusals
from accord.runtime.shared_bus import SharedEventBus
from accord.runtime.task_runtime import TaskRuntime
from accord.runtime.watched_calls import CallEnd, WatchedCall
from accord.server.operation_names import operation_of
from accord.server.pipeline import Call, Proceed
from accord.types import Task, TaskState, TaskStatusUpdateEvent

METRICS_PATH = "/metrics"

log = logging.getLogger("accord.metrics")

_OPERATION = ("operation", "version", "binding")


class Metrics:
    """The Prometheus metrics of one app (`registry`: its own unless given, so two apps in
    one process never mix; with several workers or replicas, each process is scraped on its
    own). `Metrics().install(app)` counts from then on; `route=True` also serves them at
    `/metrics` on the app's port (else `serve_metrics` or your own exposition).
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._outbox: OutboxDepth | None = None
        r = self.registry
        self.requests = Counter(
            "a2a_server_requests",
            "Operations served, by outcome: ok, or the A2A error's name.",
            [*_OPERATION, "outcome"],
            registry=r,
        )
        self.duration = Histogram(
            "a2a_server_request_duration_seconds",
            "Time to serve an operation (a stream: until its answer starts).",
            _OPERATION,
            registry=r,
        )
        self.auth_refusals = Counter(
            "a2a_authentication_refusals",
            "Requests refused by authentication, by binding.",
            ["binding"],
            registry=r,
        )
        self.rate_limited = Counter(
            "a2a_rate_limit_refusals",
            "Operations refused by a limit (RateLimited).",
            ["operation"],
            registry=r,
        )
        self.streams = Gauge("a2a_streams_open", "Event streams open now.", registry=r)
        self.runs = Gauge("a2a_agent_runs_active", "Agent runs at work now.", registry=r)
        self.run_outcomes = Counter(
            "a2a_agent_runs", "Agent runs ended, by outcome.", ["outcome"], registry=r
        )
        self.task_states = Counter(
            "a2a_task_states",
            "Task states the agent's runs reached here (a task counts once per state).",
            ["state"],
            registry=r,
        )
        self.push_attempts = Counter(
            "a2a_push_attempts",
            "Webhook POSTs tried, by result: delivered, refused (an HTTP error), error.",
            ["result"],
            registry=r,
        )
        self.push_duration = Histogram(
            "a2a_push_attempt_duration_seconds", "Time of one webhook POST.", registry=r
        )
        self.push_deliveries = Counter(
            "a2a_push_deliveries",
            "Webhook deliveries done with, by outcome: delivered, or parked (given up on).",
            ["outcome"],
            registry=r,
        )
        self.push_retries = Counter(
            "a2a_push_retries",
            "Tries of a webhook delivery that failed and are due again later.",
            registry=r,
        )
        self.store_duration = Histogram(
            "a2a_store_operation_duration_seconds",
            "Time of the runtime's calls into its SQL store, by operation: save (a staged batch"
            " of a task's events, until committed), get_task, read_events, list_tasks.",
            ["operation"],
            registry=r,
        )
        self.bus_lag = Histogram(
            "a2a_bus_delivery_lag_seconds",
            "Time from a record's publishing by another replica to its delivery to a"
            " subscriber here (shared buses: Redis, the workers' socket bus).",
            registry=r,
        )

    def install(self, app: Starlette, *, route: bool = False) -> None:
        """Count `app`'s operations, refusals, runs and webhook POSTs from now on."""
        pipeline = app.state.pipeline
        pipeline.hooks.insert(0, self.hook)
        watch_refusals(app, self._refused)
        runtime: TaskRuntime = app.state.runtime
        runtime.wrap_executor(lambda inner: CountedExecutor(inner, self))
        runtime.watch_calls(self, bus=False)
        if isinstance(runtime.bus, SharedEventBus):
            runtime.bus.lag_watchers.append(self.bus_lag.observe)
        if runtime.push is not None:
            runtime.push.watchers.append(self)
        if runtime.deliveries is not None:
            runtime.deliveries.outcome_watchers.append(self._delivery_ended)
            self._outbox = OutboxDepth(runtime, self.registry)
            app.router.lifespan_context = self._outbox.reading(app.router.lifespan_context)
        if route:
            app.router.routes.insert(0, Route(METRICS_PATH, self.endpoint, methods=["GET"]))

    async def hook(self, call: Call, proceed: Proceed) -> Any:
        """The pipeline hook: counts and times each operation."""
        operation = operation_of(call)
        labels = (operation, str(call.target.version), call.inbound.binding)
        started = time.perf_counter()
        try:
            result = await proceed()
        except A2AError as exc:
            if isinstance(exc, RateLimited):
                self.rate_limited.labels(operation).inc()
            self.requests.labels(*labels, type(exc).__name__).inc()
            raise
        except Exception:
            self.requests.labels(*labels, "InternalError").inc()
            raise
        finally:
            self.duration.labels(*labels).observe(time.perf_counter() - started)
        self.requests.labels(*labels, "ok").inc()
        if call.target.method.streaming:
            return self._counted_stream(result)
        return result

    def started(self, call: WatchedCall) -> CallEnd:
        """Times one call into the store (the runtime's seam)."""
        histogram = self.store_duration.labels(call.operation)
        started = time.perf_counter()
        return lambda error: histogram.observe(time.perf_counter() - started)

    def _delivery_ended(self, outcome: str, deliveries: int) -> None:
        if outcome == "retried":
            self.push_retries.inc(deliveries)
        else:
            self.push_deliveries.labels(outcome).inc(deliveries)

    def _refused(self, inbound: Inbound, error: A2AError) -> None:
        self.auth_refusals.labels(inbound.binding).inc()

    async def _counted_stream(self, records: AsyncIterator[Any]) -> AsyncIterator[Any]:
        self.streams.inc()
        try:
            async for record in records:
                yield record
        finally:
            self.streams.dec()

    @contextmanager
    def request(self, request: OutboundRequest) -> Iterator[None]:
        """Watches one webhook POST (the push sender's seam)."""
        started = time.perf_counter()
        try:
            yield
        except BaseException:
            self.push_attempts.labels("error").inc()
            raise
        finally:
            self.push_duration.observe(time.perf_counter() - started)
        ok = request.status is not None and 200 <= request.status < 300
        self.push_attempts.labels("delivered" if ok else "refused").inc()

    def inject(self, headers: dict[str, str]) -> None:
        """Metrics add nothing to a request."""

    async def endpoint(self, request: Request) -> Response:
        """`GET /metrics`: the registry in Prometheus' text format."""
        if self._outbox is not None:
            await self._outbox.read()
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


def serve_metrics(metrics: Metrics, port: int, host: str = "127.0.0.1") -> WSGIServer:
    """Serve `metrics` at `/metrics` on a port of their own (0: any free one), from a thread
    of this process; the server (its `server_port`, `shutdown()`)."""
    from prometheus_client import start_http_server

    server, _ = start_http_server(port, host, registry=metrics.registry)
    return server


Lifespan = Callable[[Starlette], AbstractAsyncContextManager[Any]]
SCRAPE_TIMEOUT = 5.0
"""How long a scrape on a port of the metrics' own waits for the store to count the outbox."""


class OutboxDepth(Collector):
    """`a2a_push_outbox_deliveries`: the deliveries in the store's outbox, waiting and parked,
    counted by the store at each scrape (from the app's event loop, where the store lives)."""

    NAME = "a2a_push_outbox_deliveries"
    HELP = "Webhook deliveries in the outbox now, by state: waiting (to be sent), parked."

    def __init__(self, runtime: TaskRuntime, registry: CollectorRegistry) -> None:
        self.runtime = runtime
        self.loop: asyncio.AbstractEventLoop | None = None
        self.counts: Mapping[str, int] = {"waiting": 0, "parked": 0}
        registry.register(self)

    def reading(self, lifespan: Any) -> Any:
        """`lifespan` (the app's), noting the event loop the app runs on."""

        @asynccontextmanager
        async def noting_loop(app: Starlette) -> AsyncIterator[Any]:
            self.loop = asyncio.get_running_loop()
            async with lifespan(app) as state:
                yield state

        return noting_loop

    async def read(self) -> None:
        """Count the outbox now (a store that cannot leaves the last counts standing: the
        readiness probe is where its trouble shows)."""
        self.loop = asyncio.get_running_loop()
        try:
            depth = await self.runtime.store.outbox_depth()
        except Exception:
            log.warning("could not count the push outbox; its gauge keeps the last counts")
            return
        self.counts = {"waiting": depth.waiting, "parked": depth.parked}

    def collect(self) -> Iterable[Metric]:
        loop = self.loop
        if loop is not None and loop.is_running() and not _running(loop):
            # A scrape from another thread (`serve_metrics`): ask the app's loop to count.
            with contextlib.suppress(TimeoutError):  # the loop is busy: the last counts stand
                asyncio.run_coroutine_threadsafe(self.read(), loop).result(SCRAPE_TIMEOUT)
        return self.describe_counts(self.counts)

    def describe(self) -> Iterable[Metric]:
        return self.describe_counts({})

    def describe_counts(self, counts: Mapping[str, int]) -> list[Metric]:
        family = GaugeMetricFamily(self.NAME, self.HELP, labels=["state"])
        for state, count in counts.items():
            family.add_metric([state], count)
        return [family]


def _running(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether `loop` is the one running in this thread."""
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class CountedExecutor(AgentExecutor):
    """The agent's executor, its runs counted while at work and by how they ended."""

    def __init__(self, inner: AgentExecutor, metrics: Metrics) -> None:
        self.inner = inner
        self.metrics = metrics
        self.restartable = inner.restartable

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        self.metrics.runs.inc()
        outcome = "failed"
        try:
            await self.inner.execute(context, CountedStates(events, self.metrics))
            outcome = "returned"
        finally:
            self.metrics.runs.dec()
            self.metrics.run_outcomes.labels(outcome).inc()

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        await self.inner.cancel(context, events)


class CountedStates:
    """A run's event sink, counting the task states its events reach."""

    def __init__(self, inner: EventSink, metrics: Metrics) -> None:
        self.inner = inner
        self.metrics = metrics
        self.state: TaskState | None = None

    async def send(self, event: AgentEvent) -> None:
        await self.inner.send(event)  # first: an event the task refuses counts nothing
        if isinstance(event, Task | TaskStatusUpdateEvent) and event.status.state != self.state:
            self.state = event.status.state
            self.metrics.task_states.labels(self.state.value).inc()
