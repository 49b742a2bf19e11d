"""Spans for the runtime's calls into its store and bus, in the request's trace, and webhook
POSTs continuing the trace of the request whose event caused them, on SQLite and PostgreSQL;
none of it wrapped while tracing is off."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import SpanKind

from accord import Agent, Client, create_app
from accord.observability.metrics import Metrics
from accord.observability.tracing import Tracing
from accord.runtime.bus_factory import open_bus
from accord.runtime.watched_calls import BUS_CALLS, STORE_CALLS
from accord.samples import echo
from accord.store.sql import SqlTaskStore
from accord.types import PushNotificationConfig, Task, TaskState
from agents_for_tests import until
from rpc import served
from services import redis_bus_fixture  # noqa: F401 - a fixture
from stores import Backend, sql_backend_fixture  # noqa: F401 - fixtures
from test_tracing import Spans, spans_fixture  # noqa: F401 - a fixture
from webhooks import LOOPBACK, NotificationHook, receiving


def attributes(span: ReadableSpan) -> dict[str, object]:
    return dict(span.attributes or {})


def ancestors(span: ReadableSpan, spans: list[ReadableSpan]) -> list[str]:
    """The names of `span`'s ancestors, nearest first (each must have been exported)."""
    by_id = {s.context.span_id: s for s in spans}
    names = []
    while span.parent is not None:
        span = by_id[span.parent.span_id]
        names.append(span.name)
    return names


async def test_store_and_bus_calls_are_spans_of_the_request(
    spans: Spans, sql_backend: Backend, redis_bus: str
) -> None:
    provider, exporter = spans
    store = SqlTaskStore(sql_backend.engine())  # opened by the app
    app = create_app(echo.agent, store=store, bus=open_bus(redis_bus))
    Tracing(provider).install(app)
    with served(app) as url:
        async with Client(url, transport="JSONRPC", version="1.0") as client:
            task = await client.send("hi")
            assert isinstance(task, Task)
            await client.list_tasks()  # a read of the store, whatever the run's state
        await until(
            lambda: len([s for s in exporter.get_finished_spans() if s.name == "save"]) >= 1,
            "the save's span",
        )
    finished = list(exporter.get_finished_spans())
    (send,) = [s for s in finished if s.name == "A2A/send_message"]
    (listing,) = [s for s in finished if s.name == "A2A/list_tasks"]
    saves = [s for s in finished if s.name == "save"]
    for save in saves:
        assert save.kind is SpanKind.CLIENT
        assert save.attributes == {
            "db.system": sql_backend.name,
            "db.operation": "save",
            "a2a.task_id": task.id,
        }
        assert save.context.trace_id == send.context.trace_id
        # The run's span, the operation's (SERVER), the client's call (CLIENT, same process).
        assert ancestors(save, finished) == ["A2A/agent run", "A2A/send_message", "A2A/SendMessage"]
    (read,) = [s for s in finished if s.name == "list_tasks"]
    assert read.parent is not None and read.parent.span_id == listing.context.span_id
    assert attributes(read)["db.system"] == sql_backend.name
    publishes = [s for s in finished if s.name == "publish task_records"]
    assert publishes
    for publish in publishes:
        assert publish.kind is SpanKind.PRODUCER
        assert attributes(publish)["messaging.system"] == "redis"
        assert attributes(publish)["messaging.destination.name"] == "task_records"
        assert attributes(publish)["a2a.task_id"] == task.id
        assert "A2A/send_message" in ancestors(publish, finished)


async def test_tracing_off_leaves_the_store_and_bus_as_they_are(sql_backend: Backend) -> None:
    app = create_app(echo.agent, store=SqlTaskStore(sql_backend.engine()))
    runtime = app.state.runtime
    assert not set(STORE_CALLS) & set(vars(runtime.store))
    assert not set(BUS_CALLS) & set(vars(runtime.bus))
    Tracing(TracerProvider()).install(app)
    assert set(STORE_CALLS) <= set(vars(runtime.store))
    assert not set(BUS_CALLS) & set(vars(runtime.bus))  # in-process: not worth a span


def test_calls_that_stay_in_the_process_are_neither_traced_nor_timed() -> None:
    app = create_app(echo.agent)  # the memory store, the in-process bus
    Tracing(TracerProvider()).install(app)
    Metrics().install(app)
    runtime = app.state.runtime
    assert not set(STORE_CALLS) & set(vars(runtime.store))
    assert not set(BUS_CALLS) & set(vars(runtime.bus))


async def test_a_webhook_post_continues_the_trace_of_the_request_that_caused_it(
    spans: Spans, sql_backend: Backend
) -> None:
    provider, exporter = spans
    hook = NotificationHook()
    agent = Agent(echo.agent.executor, name="Reporter", push_notifications=True)
    app = create_app(agent, store=SqlTaskStore(sql_backend.engine()), push_allow=LOOPBACK)
    Tracing(provider).install(app)
    with receiving(hook) as hook_url, served(app) as url:
        async with Client(url, transport="JSONRPC", version="1.0") as client:
            await client.send("hi", push=PushNotificationConfig(url=hook_url))
        await hook.reached(TaskState.COMPLETED).wait()
        pushes = lambda: [s for s in exporter.get_finished_spans() if s.name == "A2A/push"]  # noqa: E731
        await until(lambda: len(pushes()) == len(hook.calls), "the push spans")
    finished = list(exporter.get_finished_spans())
    (send,) = [s for s in finished if s.name == "A2A/send_message"]
    (call,) = [s for s in finished if s.name == "A2A/SendMessage"]
    assert call.parent is None  # the client's call starts the trace
    for push in pushes():
        # The delivery was claimed from the store, by the worker, outside any request: its
        # span is the run's child all the same, through the trace context saved with it.
        assert push.context.trace_id == send.context.trace_id
        assert ancestors(push, finished)[:2] == ["A2A/agent run", "A2A/send_message"]
    sent = {tuple(headers["traceparent"].split("-")[1:3]) for headers, _ in hook.calls}
    assert sent == {(f"{s.context.trace_id:032x}", f"{s.context.span_id:016x}") for s in pushes()}
