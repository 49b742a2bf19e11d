"""The A2A operations, one suite for every binding and version the server answers: JSON-RPC,
HTTP+JSON and gRPC, each in 0.3 and 1.0, spoken on the wire and checked as canonical facts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from accord import Agent, AgentExecutor, create_app
from accord.keys import CardSignatureError, StaticKeys, verify_card
from accord.samples import echo
from accord.types import TaskState, new_id
from agents_for_tests import (
    EXTENDED_CARD,
    AsksThenCompletes,
    GatedStreamer,
    NeverFinishes,
    switchboard,
)
from operations import WIRES, Server, Wire, connect_wire
from rpc import served
from wire_facts import MessageFacts, Refused, TaskFacts

SWITCHBOARD = switchboard()
HOOK = "https://client.example.com/hook"


def over(*needs: str) -> pytest.MarkDecorator:
    """Parametrize a scenario over every wire that has the operations it `needs`."""
    wires = [pytest.param(kind, id=kind.name) for kind in WIRES if not kind.lacks & set(needs)]
    return pytest.mark.parametrize("kind", wires)


@pytest.fixture(scope="module")
def full_server() -> Iterator[Server]:
    """A streaming agent with push notifications and an extended card, on HTTP and gRPC."""
    agent = Agent(
        SWITCHBOARD, name="Test agent", push_notifications=True, extended_card=EXTENDED_CARD
    )
    with serve(agent) as server:
        yield server


@pytest.fixture(scope="module")
def bare_server() -> Iterator[Server]:
    """An agent without streaming, push notifications or an extended card."""
    with serve(Agent(echo.agent.executor, name="Bare agent", streaming=False)) as server:
        yield server


@contextmanager
def serve(agent: Agent, **options: Any) -> Iterator[Server]:
    """Serve `agent` on loopback HTTP and gRPC (`options` go to create_app); the gRPC target
    is read from its public card."""
    with served(create_app(agent, grpc_port=0, **options)) as base_url:
        card = httpx.get(f"{base_url}/.well-known/agent-card.json").json()
        interfaces = card["supportedInterfaces"]
        (target,) = {i["url"] for i in interfaces if i["protocolBinding"] == "GRPC"}
        yield Server(base_url, target)


@pytest.fixture
async def wire(kind: type[Wire], full_server: Server) -> AsyncIterator[Wire]:
    async with connect_wire(kind, full_server) as connected:
        yield connected


@pytest.fixture
async def bare_wire(kind: type[Wire], bare_server: Server) -> AsyncIterator[Wire]:
    async with connect_wire(kind, bare_server) as connected:
        yield connected


def routed(executor: AgentExecutor) -> str:
    """A word that, opening a task's first message, sends the task to `executor`."""
    word = f"route-{new_id()}"
    SWITCHBOARD.routes[word] = executor
    return word


async def finished_task(
    wire: Wire,
    text: str = "finish this",
    *,
    task_id: str | None = None,
    context_id: str | None = None,
) -> TaskFacts:
    task = await wire.send(text, task_id=task_id, context_id=context_id)
    assert isinstance(task, TaskFacts) and task.state == "completed", task
    # Status times have millisecond precision and listings put ties in no particular order:
    # the next task's time must differ for "newest first" to name one order.
    await asyncio.sleep(0.002)
    return task


# --- send ------------------------------------------------------------------------------------


@over()
async def test_send_blocks_until_the_task_completes(wire: Wire) -> None:
    task = await wire.send("ping")
    assert isinstance(task, TaskFacts)
    assert (task.state, task.artifacts, task.history[0]) == ("completed", ["ping"], "ping")
    assert task.id and task.context_id


@over()
async def test_send_keeps_the_context_id_it_is_given(wire: Wire) -> None:
    context_id = f"ctx-{new_id()}"
    task = await finished_task(wire, context_id=context_id)
    assert task.context_id == context_id


@over()
async def test_send_without_a_context_id_starts_a_new_context(wire: Wire) -> None:
    first, second = await finished_task(wire), await finished_task(wire)
    assert first.context_id and second.context_id
    assert first.context_id != second.context_id
    assert first.id != second.id


@over()
async def test_send_to_a_message_agent_answers_with_the_message(wire: Wire) -> None:
    reply = await wire.send("reply to me", context_id="c-1")
    assert reply == MessageFacts("agent", "reply to me", "c-1")


@over()
async def test_send_non_blocking_answers_before_the_task_ends(wire: Wire) -> None:
    agent = GatedStreamer(chunks=1)
    task = await wire.send(f"{routed(agent)} slow", blocking=False)
    assert isinstance(task, TaskFacts) and task.state in {"submitted", "working"}
    assert not agent.steps[0].is_open
    agent.release_all()
    await agent.finished.wait()
    done = await wire.get_task(task.id)
    assert (done.state, done.artifacts) == ("completed", ["chunk 0"])


@over()
async def test_multi_turn_input_required_then_completed(wire: Wire) -> None:
    asked = await wire.send("ask me")
    assert isinstance(asked, TaskFacts) and asked.state == "input-required"
    assert asked.status_text == AsksThenCompletes.QUESTION
    done = await finished_task(wire, "Ada", task_id=asked.id, context_id=asked.context_id)
    assert (done.id, done.artifacts) == (asked.id, ["Hello, Ada!"])
    assert done.history == ["ask me", AsksThenCompletes.QUESTION, "Ada"]


@over()
async def test_a_follow_up_without_a_context_id_stays_in_the_tasks_context(wire: Wire) -> None:
    context_id = f"ctx-{new_id()}"
    asked = await wire.send("ask me", context_id=context_id)
    assert isinstance(asked, TaskFacts)
    done = await finished_task(wire, "Ada", task_id=asked.id)
    assert (done.id, done.context_id) == (asked.id, context_id)


@over()
async def test_a_follow_up_in_another_context_is_invalid_params(wire: Wire) -> None:
    asked = await wire.send("ask me")
    assert isinstance(asked, TaskFacts)
    with pytest.raises(Refused) as refused:
        await wire.send("Ada", task_id=asked.id, context_id=f"ctx-{new_id()}")
    assert refused.value.reason == "INVALID_PARAMS"
    assert "contextId" in refused.value.message
    assert (await wire.get_task(asked.id)).state == "input-required"


@over()
async def test_a_message_to_an_unknown_task_is_task_not_found(wire: Wire) -> None:
    with pytest.raises(Refused) as sent:
        await wire.send("hello", task_id="no-such-task")
    with pytest.raises(Refused) as streamed:
        async with wire.stream("hello", taskId="no-such-task"):
            pass
    assert sent.value.reason == streamed.value.reason == "TASK_NOT_FOUND"
    assert "no-such-task" in sent.value.message


@over()
async def test_a_message_to_a_finished_task_is_an_unsupported_operation(wire: Wire) -> None:
    task = await finished_task(wire)
    with pytest.raises(Refused) as sent:
        await wire.send("more", task_id=task.id, context_id=task.context_id)
    with pytest.raises(Refused) as streamed:
        async with wire.stream("more", taskId=task.id):
            pass
    assert sent.value.reason == streamed.value.reason == "UNSUPPORTED_OPERATION"
    assert (await wire.get_task(task.id)).history == ["finish this"]


@over()
async def test_a_message_without_an_id_is_invalid_params_naming_it(wire: Wire) -> None:
    with pytest.raises(Refused) as refused:
        await wire.send_without_message_id("no id")
    assert refused.value.reason == "INVALID_PARAMS"
    assert refused.value.fields == ["message.messageId"]


@over()
async def test_a_message_without_parts_is_invalid_params(wire: Wire) -> None:
    with pytest.raises(Refused) as sent:
        await wire.send_without_parts()
    with pytest.raises(Refused) as streamed:
        async with wire.stream_without_parts():
            pass
    for refused in (sent.value, streamed.value):
        assert refused.reason == "INVALID_PARAMS"
        assert refused.fields == ["message.parts"]
        assert "at least one part is required" in refused.message


@over()
async def test_a_protocol_error_of_the_agent_reaches_the_client(wire: Wire) -> None:
    with pytest.raises(Refused) as refused:
        await wire.send("reject this")
    assert refused.value.reason == "CONTENT_TYPE_NOT_SUPPORTED"


# --- get -------------------------------------------------------------------------------------


@over()
async def test_get_task_returns_the_task_and_trims_its_history(wire: Wire) -> None:
    asked = await wire.send("ask me")
    assert isinstance(asked, TaskFacts)
    done = await finished_task(wire, "Ada", task_id=asked.id, context_id=asked.context_id)
    fetched = await wire.get_task(asked.id)
    assert fetched == done
    assert len(fetched.history) == 3
    assert (await wire.get_task(asked.id, history_length=1)).history == ["Ada"]
    assert len((await wire.get_task(asked.id, history_length=5)).history) == 3
    none = (await wire.get_task(asked.id, history_length=0)).history
    assert none == (fetched.history if wire.zero_history_is_all else [])


@over()
async def test_an_unknown_task_is_task_not_found(wire: Wire) -> None:
    async def subscribe(task_id: str) -> None:
        async with wire.subscribe(task_id):
            pass

    for operation in (wire.get_task, wire.cancel, subscribe):
        with pytest.raises(Refused) as refused:
            await operation("no-such-task")
        assert refused.value.reason == "TASK_NOT_FOUND"
        assert "no-such-task" in refused.value.message


# --- stream ----------------------------------------------------------------------------------


@over()
async def test_stream_sends_the_task_then_each_change(wire: Wire) -> None:
    async with wire.stream("stream me") as stream:
        events = await stream.rest()
    assert [(e.kind, e.state) for e in events] == [
        ("task", "submitted"),
        ("status", "working"),
        ("artifact", None),
        ("status", "completed"),
    ]
    assert events[2].text == "stream me"
    assert len({e.task_id for e in events}) == 1
    finals = [e.final for e in events if e.kind == "status"]
    assert finals == ([None, None] if wire.version == "1.0" else [False, True])  # 1.0 has none
    if "replay" not in wire.lacks:
        numbers = [e.seq for e in events]
        assert None not in numbers and numbers == sorted(set(numbers))  # type: ignore[type-var]


@over()
async def test_stream_of_a_follow_up_starts_with_the_task(wire: Wire) -> None:
    asked = await wire.send("ask me")
    assert isinstance(asked, TaskFacts)
    async with wire.stream("Ada", taskId=asked.id) as stream:
        events = await stream.rest()
    assert (events[0].kind, events[0].task_id) == ("task", asked.id)
    assert (events[-1].kind, events[-1].state) == ("status", "completed")
    assert all(e.seq is None or e.seq > 1 for e in events), "the task's log goes on"


@over()
async def test_stream_of_a_message_reply_is_that_message(wire: Wire) -> None:
    async with wire.stream("reply now") as stream:
        events = await stream.rest()
    assert [(e.kind, e.text, e.seq) for e in events] == [("message", "reply now", None)]


@over()
async def test_stream_refused_by_the_agent_is_refused_before_any_event(wire: Wire) -> None:
    with pytest.raises(Refused) as refused:
        async with wire.stream("reject this"):
            pass
    assert refused.value.reason == "CONTENT_TYPE_NOT_SUPPORTED"


@over()
async def test_streaming_of_an_agent_without_streaming_is_unsupported(bare_wire: Wire) -> None:
    task = await finished_task(bare_wire)
    with pytest.raises(Refused) as streamed:
        async with bare_wire.stream("hi"):
            pass
    with pytest.raises(Refused) as subscribed:
        async with bare_wire.subscribe(task.id):
            pass
    assert streamed.value.reason == subscribed.value.reason == "UNSUPPORTED_OPERATION"


# --- cancel ----------------------------------------------------------------------------------


@over()
async def test_cancel_of_a_running_task_reaches_the_agent(wire: Wire) -> None:
    agent = NeverFinishes()
    task = await wire.send(f"{routed(agent)} forever", blocking=False)
    assert isinstance(task, TaskFacts)
    await agent.started.wait()
    canceled = await wire.cancel(task.id)
    assert (canceled.id, canceled.state) == (task.id, "canceled")
    await agent.cancel_called.wait()
    await agent.stopped.wait()
    assert (await wire.get_task(task.id)).state == "canceled"


@over()
async def test_cancel_of_a_streamed_task_ends_its_stream(wire: Wire) -> None:
    agent = NeverFinishes()
    async with wire.stream(f"{routed(agent)} forever") as stream:
        task = await stream.next()
        assert (await stream.next()).state == "working"
        assert task.task_id is not None
        await wire.cancel(task.task_id)
        rest = await stream.rest()
    last = rest[-1]
    assert (last.kind, last.state, last.text) == ("status", "canceled", "stopped on request")
    assert last.final in (None, True)
    assert agent.cancel_called.is_open


@over()
async def test_cancel_of_a_task_waiting_for_input(wire: Wire) -> None:
    asked = await wire.send("ask me")
    assert isinstance(asked, TaskFacts)
    assert (await wire.cancel(asked.id)).state == "canceled"
    with pytest.raises(Refused) as refused:
        await wire.send("Ada", task_id=asked.id)
    assert refused.value.reason == "UNSUPPORTED_OPERATION"


@over()
async def test_cancel_of_a_finished_task_is_not_cancelable(wire: Wire) -> None:
    task = await finished_task(wire)
    with pytest.raises(Refused) as refused:
        await wire.cancel(task.id)
    assert refused.value.reason == "TASK_NOT_CANCELABLE"
    assert (await wire.get_task(task.id)).state == "completed"


# --- subscribe -------------------------------------------------------------------------------


@over()
async def test_subscribe_sends_the_task_first_then_live_events(wire: Wire) -> None:
    agent = GatedStreamer(chunks=2)
    task = await wire.send(f"{routed(agent)} go", blocking=False)
    assert isinstance(task, TaskFacts)
    await agent.started.wait()
    async with wire.subscribe(task.id) as stream:
        first = await stream.next()
        agent.release_all()
        rest = await stream.rest()
    assert (first.kind, first.task_id, first.state) == ("task", task.id, "working")
    assert [(e.kind, e.state) for e in rest] == [
        ("artifact", None),
        ("artifact", None),
        ("status", "completed"),
    ]


@over()
@pytest.mark.parametrize("pause", [TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED])
async def test_subscribe_to_a_paused_task_follows_the_next_turn_to_the_end(
    wire: Wire, pause: TaskState
) -> None:
    asked = await wire.send(f"{routed(AsksThenCompletes(pause))} ask me")
    assert isinstance(asked, TaskFacts) and asked.state == pause.value
    async with wire.subscribe(asked.id) as stream:
        first = await stream.next()
        assert (first.kind, first.task_id, first.state) == ("task", asked.id, pause.value)
        done = await finished_task(wire, "Ada", task_id=asked.id, context_id=asked.context_id)
        rest = await stream.rest()
    assert [(e.kind, e.state) for e in rest] == [
        ("task", pause.value),  # the answer joined the task's history
        ("status", "working"),
        ("artifact", None),
        ("status", "completed"),
    ]
    assert rest[2].text == done.artifacts[0] == "Hello, Ada!"


@over("replay")
async def test_subscribe_with_last_event_id_replays_what_was_missed(wire: Wire) -> None:
    async with wire.stream("replay me") as stream:
        events = await stream.rest()
    task_id = events[0].task_id
    assert task_id is not None
    async with wire.subscribe(task_id, last_event_id=events[1].seq) as stream:
        replayed = await stream.rest()
    assert replayed == events[2:]


@over()
async def test_subscribe_to_a_finished_task_is_an_unsupported_operation(wire: Wire) -> None:
    task = await finished_task(wire)
    with pytest.raises(Refused) as refused:
        async with wire.subscribe(task.id):
            pass
    assert refused.value.reason == "UNSUPPORTED_OPERATION"


# --- list tasks ------------------------------------------------------------------------------


@over("list_tasks")
async def test_list_tasks_filters_by_context_and_state_newest_first(wire: Wire) -> None:
    context_id = f"ctx-{new_id()}"
    made = [(await finished_task(wire, f"task {n}", context_id=context_id)).id for n in range(3)]
    asked = await wire.send("ask me", context_id=context_id)
    assert isinstance(asked, TaskFacts)
    await finished_task(wire, "elsewhere")

    everything = await wire.list_tasks(contextId=context_id)
    assert everything.ids == [asked.id, *reversed(made)]
    assert (everything.next_token, everything.total_size) == ("", 4)
    assert all(not task.artifacts for task in everything.tasks)
    completed = await wire.list_tasks(contextId=context_id, status="completed")
    assert completed.ids == list(reversed(made))
    waiting = await wire.list_tasks(contextId=context_id, status="input-required")
    assert waiting.ids == [asked.id]
    assert (await wire.list_tasks(contextId=f"ctx-{new_id()}")).ids == []


@over("list_tasks")
async def test_list_tasks_pages_with_tokens_and_includes_artifacts_when_asked(wire: Wire) -> None:
    context_id = f"ctx-{new_id()}"
    made = [(await finished_task(wire, f"task {n}", context_id=context_id)).id for n in range(3)]
    pages: list[list[str]] = []
    token = ""
    while True:
        page = await wire.list_tasks(contextId=context_id, pageSize=2, pageToken=token)
        assert page.total_size == 3
        pages.append(page.ids)
        token = page.next_token
        if not token:
            break
    assert pages == [list(reversed(made))[:2], made[:1]]
    full = await wire.list_tasks(contextId=context_id, includeArtifacts=True, historyLength=1)
    assert [task.artifacts for task in full.tasks] == [["task 2"], ["task 1"], ["task 0"]]
    assert all(len(task.history) == 1 for task in full.tasks)


@over("list_tasks")
async def test_list_tasks_refuses_a_page_size_out_of_range(wire: Wire) -> None:
    with pytest.raises(Refused) as refused:
        await wire.list_tasks(pageSize=0)
    assert refused.value.reason == "INVALID_PARAMS"
    assert refused.value.fields == ["pageSize"]


@over()
async def test_the_extended_card_carries_a_signature_of_what_each_wire_says(
    wire: Wire, full_server: Server
) -> None:
    card = await wire.call(wire.NAMES["card"], {} if wire.version == "1.0" else None)
    async with httpx.AsyncClient() as http:
        jwks = (await http.get(f"{full_server.base_url}/.well-known/jwks.json")).json()
    assert await verify_card(card, StaticKeys(jwks))
    with pytest.raises(CardSignatureError):
        await verify_card({**card, "name": "someone else"}, StaticKeys(jwks))


# --- push notification configs ---------------------------------------------------------------


@over()
async def test_push_configs_set_get_list_delete(wire: Wire) -> None:
    task = await finished_task(wire)
    first = await wire.set_push(task.id, "hook-1", HOOK, "t-1")
    assert (first.task_id, first.id, first.url, first.token) == (task.id, "hook-1", HOOK, "t-1")
    second = await wire.set_push(task.id, "hook-2", f"{HOOK}/2", "t-2")
    assert await wire.get_push(task.id, "hook-1") == first
    assert await wire.list_push(task.id) == [first, second]
    await wire.delete_push(task.id, "hook-1")
    assert await wire.list_push(task.id) == [second]
    with pytest.raises(Refused) as gone:
        await wire.get_push(task.id, "hook-1")
    assert gone.value.reason == "TASK_NOT_FOUND"


@over()
@pytest.mark.parametrize(
    ("url", "token", "field", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "t", "url", "cloud metadata"),
        ("http://[::ffff:127.0.0.1]:8080/hook", "t", "url", "loopback"),
        ("http://localhost:8080/hook", "t", "url", "loopback"),
        ("http://10.0.0.8/hook", "t", "url", "private"),
        ("http://[::1", "t", "url", "does not parse"),
        ("file:///etc/passwd", "t", "url", "scheme"),
        (HOOK, "tök", "token", "printable ASCII"),
    ],
)
async def test_a_push_config_no_webhook_may_have_is_invalid_params(
    wire: Wire, url: str, token: str, field: str, reason: str
) -> None:
    task = await finished_task(wire)
    with pytest.raises(Refused) as refused:
        await wire.set_push(task.id, "hook", url, token)
    assert refused.value.reason == "INVALID_PARAMS"
    assert f"`{field}`" in refused.value.message and reason in refused.value.message
    assert refused.value.fields in ([], [field])
    assert await wire.list_push(task.id) == []


@over()
async def test_push_configs_of_an_unknown_task_are_task_not_found(wire: Wire) -> None:
    with pytest.raises(Refused) as refused:
        await wire.set_push("no-such-task", "hook", HOOK, "t")
    assert refused.value.reason == "TASK_NOT_FOUND"


@over()
async def test_push_configs_of_an_agent_without_push_are_not_supported(bare_wire: Wire) -> None:
    task = await finished_task(bare_wire)
    for operation in (
        bare_wire.set_push(task.id, "hook", HOOK, "t"),
        bare_wire.get_push(task.id, "hook"),
        bare_wire.list_push(task.id),
        bare_wire.delete_push(task.id, "hook"),
    ):
        with pytest.raises(Refused) as refused:
            await operation
        assert refused.value.reason == "PUSH_NOTIFICATION_NOT_SUPPORTED"


# --- extended card ---------------------------------------------------------------------------


@over()
async def test_extended_card_is_returned_when_configured(wire: Wire) -> None:
    assert await wire.extended_card_name() == "Switchboard (extended)"


@over()
async def test_extended_card_not_configured_is_refused(bare_wire: Wire) -> None:
    with pytest.raises(Refused) as refused:
        await bare_wire.extended_card_name()
    assert refused.value.reason == "EXTENDED_AGENT_CARD_NOT_CONFIGURED"


# --- versions --------------------------------------------------------------------------------


@over()
async def test_a_request_naming_the_other_version_is_refused(wire: Wire) -> None:
    with pytest.raises(Refused) as refused:
        await wire.send_naming_the_other_version("hi")
    assert refused.value.reason == "VERSION_NOT_SUPPORTED"
