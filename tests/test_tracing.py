"""One trace across three real accord servers: a host delegating to two agents, over every
binding, its spans' parents checked; traces carried on webhook POSTs; the agent's trace
context in its RequestContext."""

from __future__ import annotations

import ast
import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import accord
from accord import Agent, Client, create_app
from accord.agents import AgentExecutor, EventSink, RequestContext, TaskUpdater
from accord.auth import ApiKey, Security
from accord.errors import TaskNotFound, Unauthenticated
from accord.host import AgentRegistry, host_agent
from accord.observability.client_tracing import untrace_clients
from accord.observability.tracing import Tracing
from accord.samples import echo, image
from accord.types import Message, PushNotificationConfig, Task, TaskState
from agents_for_tests import HOST_TOKEN, SAFETY_TIMEOUT
from rpc import served
from webhooks import LOOPBACK, NotificationHook, receiving

Spans = tuple[TracerProvider, InMemorySpanExporter]


@pytest.fixture(name="spans")
def spans_fixture() -> Iterator[Spans]:
    """A tracer provider keeping every finished span in memory; client tracing off after."""
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    untrace_clients()
    provider.shutdown()


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def parent_of(span: ReadableSpan, spans: list[ReadableSpan]) -> ReadableSpan:
    assert span.parent is not None, f"{span.name} has no parent"
    found = [s for s in spans if s.context.span_id == span.parent.span_id]
    assert len(found) == 1, f"the parent of {span.name} was not exported"
    return found[0]


def served_by(spans: list[ReadableSpan], agent: str, kind: SpanKind) -> list[ReadableSpan]:
    return [s for s in spans if s.kind is kind and (s.attributes or {}).get("a2a.agent") == agent]


BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")


@pytest.mark.parametrize("binding", BINDINGS)
async def test_one_trace_follows_a_request_through_the_host_to_two_agents(
    binding: str, spans: Spans, tmp_path: Path
) -> None:
    provider, exporter = spans
    apps = [create_app(echo.agent), create_app(image.agent)]
    for app in apps:
        Tracing(provider).install(app)
    with served(apps[0]) as echo_url, served(apps[1]) as image_url:
        host = host_agent(
            AgentRegistry(tmp_path / "agents.json", [echo_url, image_url]), token=HOST_TOKEN
        )
        host_app = create_app(host, grpc_port=0)
        Tracing(provider).install(host_app)
        with served(host_app) as host_url:
            with provider.get_tracer("test").start_as_current_span("caller") as caller:
                async with Client(host_url, transport=binding, timeout=SAFETY_TIMEOUT) as client:
                    result = await client.send("echo hello and draw a red circle")
            assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
            runs = lambda: [s for s in exporter.get_finished_spans() if s.name == "A2A/agent run"]  # noqa: E731
            await until(lambda: len(runs()) == 3, "the three runs' spans")
            # The agents' streams end once the host has read them to the end.
            await until(
                lambda: all(
                    served_by(list(exporter.get_finished_spans()), name, SpanKind.SERVER)
                    for name in (echo.agent.name, image.agent.name)
                ),
                "the agents' operation spans",
            )
    finished = list(exporter.get_finished_spans())
    trace_id = caller.get_span_context().trace_id
    assert {s.context.trace_id for s in finished} == {trace_id}

    # caller -> client call -> the host's operation (over `binding`) -> the host's run
    (host_op,) = served_by(finished, host.name, SpanKind.SERVER)
    assert host_op.attributes["a2a.binding"] == binding
    assert host_op.attributes["rpc.method"] == "send_message"
    assert host_op.attributes["a2a.outcome"] == "ok"
    assert host_op.attributes["a2a.task_id"] == result.id
    call = parent_of(host_op, finished)
    assert call.kind is SpanKind.CLIENT and call.attributes["a2a.binding"] == binding
    assert parent_of(call, finished).context.span_id == caller.get_span_context().span_id
    (host_run,) = [s for s in runs() if s.attributes["a2a.agent"] == host.name]
    assert parent_of(host_run, finished) is host_op

    # the host's run -> a client call to each agent -> its operation -> its run
    for agent in (echo.agent, image.agent):
        (operation,) = served_by(finished, agent.name, SpanKind.SERVER)
        delegation = parent_of(operation, finished)
        assert delegation.kind is SpanKind.CLIENT
        assert parent_of(delegation, finished) is host_run
        (run,) = [s for s in runs() if s.attributes["a2a.agent"] == agent.name]
        assert parent_of(run, finished) is operation


class AsksOverEveryBinding(AgentExecutor):
    """Asks the agent at `url` the same thing over each binding, then completes."""

    def __init__(self) -> None:
        self.url = ""

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        for binding in BINDINGS:
            async with Client(self.url, transport=binding, timeout=SAFETY_TIMEOUT) as client:
                await client.send(context.text)
        await TaskUpdater(context, events).complete("asked three times")


async def test_an_agent_calling_another_over_each_binding_continues_its_trace(
    spans: Spans,
) -> None:
    provider, exporter = spans
    asks = AsksOverEveryBinding()
    callee, caller = create_app(echo.agent, grpc_port=0), create_app(Agent(asks, name="Asker"))
    for app in (callee, caller):
        Tracing(provider).install(app)
    with served(callee) as callee_url, served(caller) as caller_url:
        asks.url = callee_url
        async with Client(caller_url, timeout=SAFETY_TIMEOUT) as client:
            await client.send("hello")
        await until(
            lambda: (
                len(
                    served_by(list(exporter.get_finished_spans()), echo.agent.name, SpanKind.SERVER)
                )
                == 3
            ),
            "the callee's operation spans",
        )
    finished = list(exporter.get_finished_spans())
    (run,) = [
        s for s in finished if s.name == "A2A/agent run" and s.attributes["a2a.agent"] == "Asker"
    ]
    operations = served_by(finished, echo.agent.name, SpanKind.SERVER)
    assert sorted(s.attributes["a2a.binding"] for s in operations) == sorted(BINDINGS)
    for operation in operations:
        call = parent_of(operation, finished)
        assert call.kind is SpanKind.CLIENT
        assert call.attributes["a2a.binding"] == operation.attributes["a2a.binding"]
        assert parent_of(call, finished) is run
    assert len({s.context.trace_id for s in finished}) == 1


async def test_webhook_posts_carry_the_trace_of_their_delivery_span(spans: Spans) -> None:
    provider, exporter = spans
    hook = NotificationHook()
    app = create_app(
        Agent(echo.agent.executor, name="Reporter", push_notifications=True), push_allow=LOOPBACK
    )
    Tracing(provider).install(app)
    with receiving(hook) as hook_url, served(app) as url:
        async with Client(url, timeout=SAFETY_TIMEOUT) as client:
            await client.send("hi", push=PushNotificationConfig(url=hook_url + "?token=s3cret"))
        await hook.reached(TaskState.COMPLETED).wait()
        pushes = lambda: [s for s in exporter.get_finished_spans() if s.name == "A2A/push"]  # noqa: E731
        await until(lambda: len(pushes()) == len(hook.calls), "the push spans")
    sent = {tuple(headers["traceparent"].split("-")[1:3]) for headers, _ in hook.calls}
    assert sent == {(f"{s.context.trace_id:032x}", f"{s.context.span_id:016x}") for s in pushes()}
    for span in pushes():
        assert span.kind is SpanKind.CLIENT
        assert span.attributes["http.response.status_code"] == 204
        assert span.attributes["url.full"] == hook_url  # the query, where secrets go, left out


class Forwards(AgentExecutor):
    """Answers with the trace context its request came with."""

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        await events.send(Message.agent(json.dumps(context.trace_headers)))


async def test_an_agent_is_given_the_trace_context_of_its_request_on_every_binding() -> None:
    sent = {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "tracestate": "congo=t61rcWkgMzE",
        "baggage": "tenant=blue",
    }
    app = create_app(Agent(Forwards(), name="Forwards"), grpc_port=0)
    with served(app) as url:
        for binding in BINDINGS:
            async with Client(url, transport=binding, headers=sent) as client:
                answer = await client.send("hi")
            assert isinstance(answer, Message)
            assert json.loads(answer.text) == sent, binding


def test_nothing_outside_observability_imports_opentelemetry_or_prometheus() -> None:
    src = Path(accord.__file__).parent
    for path in src.rglob("*.py"):
        if "observability" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.partition(".")[0] not in ("opentelemetry", "prometheus_client"), path


async def test_errors_and_refusals_are_spans_with_their_code(spans: Spans) -> None:
    provider, exporter = spans
    agent = Agent(echo.agent.executor, name="Keyed", security=Security(ApiKey({"k-1": "alice"})))
    app = create_app(agent)
    Tracing(provider).install(app)
    with served(app) as url:
        async with Client(url, version="1.0", headers={"X-API-Key": "k-1"}) as client:
            with pytest.raises(TaskNotFound):
                await client.get_task("no-such-task")
        async with Client(url, version="1.0", headers={"X-API-Key": "wrong"}) as client:
            with pytest.raises(Unauthenticated):
                await client.send("hi")
    finished = exporter.get_finished_spans()
    (missing,) = [s for s in finished if s.name == "A2A/get_task"]
    assert missing.kind is SpanKind.SERVER and missing.status.status_code is StatusCode.ERROR
    assert missing.attributes["a2a.error_code"] == TaskNotFound.code
    assert missing.attributes["a2a.outcome"] == "error"
    assert missing.attributes["enduser.id"] == "alice"
    (refused,) = [s for s in finished if s.name == "A2A/authenticate"]
    assert refused.attributes["a2a.error_code"] == Unauthenticated.code
    assert "enduser.id" not in refused.attributes and "wrong" not in str(refused.attributes)
    # The client's spans say the same, from the caller's side (the store's are CLIENT spans too).
    calls = [s for s in finished if s.kind is SpanKind.CLIENT and s.name.startswith("A2A/")]
    assert {s.attributes.get("a2a.error_code") for s in calls} == {
        TaskNotFound.code,
        Unauthenticated.code,
    }


BAD_CONTEXTS = [
    {"traceparent": "00-xyz"},
    {"traceparent": f"00-{'0' * 32}-{'0' * 16}-01"},  # all-zero ids are invalid
    {"traceparent": f"ff-{'a' * 32}-{'b' * 16}-01"},  # version ff is forbidden
    {"traceparent": "00-" + "a" * 10_000},
    {"tracestate": ",,=,=x" * 500, "baggage": "=;;,=,%zz" * 500},
]


@pytest.mark.parametrize("headers", BAD_CONTEXTS, ids=range(len(BAD_CONTEXTS)))
async def test_a_malformed_trace_context_starts_a_new_trace(
    spans: Spans, headers: dict[str, str]
) -> None:
    provider, exporter = spans
    app = create_app(echo.agent)
    Tracing(provider).install(app)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
    }
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        answer = await http.post("/", json=body, headers={"A2A-Version": "1.0", **headers})
    assert answer.status_code == 200 and "result" in answer.json()
    (operation,) = [s for s in exporter.get_finished_spans() if s.kind is SpanKind.SERVER]
    assert operation.parent is None and operation.context.trace_id != int("a" * 32, 16)
