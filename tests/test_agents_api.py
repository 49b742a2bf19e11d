"""The agent-writing API: TaskUpdater, the @accord.agent decorator, Agent and the echo samples."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

import accord
from accord import Agent, RequestContext, TaskUpdater
from accord.agents import AgentEvent, FunctionExecutor, to_parts
from accord.errors import ContentTypeNotSupported, InvalidAgentResponse
from accord.samples import echo
from accord.testing import agent_client
from accord.types import (
    AgentSkill,
    Artifact,
    DataPart,
    Message,
    Part,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from agents_for_tests import RecordingSink
from rpc import live, text_of


def context(text: str = "hello", *, task_id: str = "t1", context_id: str = "c1") -> RequestContext:
    message = Message.user(text, task_id=task_id, context_id=context_id)
    return RequestContext(message=message, task_id=task_id, context_id=context_id)


def updater() -> tuple[TaskUpdater, list[AgentEvent]]:
    sink = RecordingSink()
    return TaskUpdater(context(), sink), sink.events


def status_event(event: AgentEvent) -> TaskStatusUpdateEvent:
    assert isinstance(event, TaskStatusUpdateEvent)
    assert (event.task_id, event.context_id) == ("t1", "c1")
    return event


def artifact_event(event: AgentEvent) -> TaskArtifactUpdateEvent:
    assert isinstance(event, TaskArtifactUpdateEvent)
    assert (event.task_id, event.context_id) == ("t1", "c1")
    return event


def states(events: Sequence[AgentEvent]) -> list[TaskState]:
    return [e.status.state for e in events if isinstance(e, TaskStatusUpdateEvent)]


def artifact_texts(events: Sequence[AgentEvent]) -> list[str]:
    return [
        "".join(p.text for p in e.artifact.parts if isinstance(p, TextPart))
        for e in events
        if isinstance(e, TaskArtifactUpdateEvent)
    ]


# --- TaskUpdater -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("helper", "state", "final"),
    [
        ("submit", TaskState.SUBMITTED, False),
        ("start_work", TaskState.WORKING, False),
        ("requires_input", TaskState.INPUT_REQUIRED, True),
        ("requires_auth", TaskState.AUTH_REQUIRED, True),
        ("complete", TaskState.COMPLETED, True),
        ("fail", TaskState.FAILED, True),
        ("reject", TaskState.REJECTED, True),
        ("cancel", TaskState.CANCELED, True),
    ],
)
async def test_status_helpers_send_one_status_event(
    helper: str, state: TaskState, final: bool
) -> None:
    task, events = updater()
    await getattr(task, helper)("a note")
    assert len(events) == 1
    event = status_event(events[0])
    assert (event.status.state, event.final) == (state, final)
    assert event.status.timestamp
    message = event.status.message
    assert message is not None
    assert (message.role, message.text) == (Role.AGENT, "a note")
    assert (message.task_id, message.context_id) == ("t1", "c1")


async def test_status_without_message_has_none() -> None:
    task, events = updater()
    await task.complete()
    assert status_event(events[0]).status.message is None


async def test_status_accepts_parts_and_whole_messages() -> None:
    task, events = updater()
    data = DataPart(data={"k": 1})
    await task.start_work([TextPart(text="a"), data])
    own = Message.agent("mine")
    await task.complete(own)
    first = status_event(events[0]).status.message
    assert first is not None and first.parts == [TextPart(text="a"), data]
    assert status_event(events[1]).status.message is own


async def test_update_status_passes_metadata() -> None:
    task, events = updater()
    await task.update_status(TaskState.WORKING, metadata={"progress": 0.5})
    assert status_event(events[0]).metadata == {"progress": 0.5}


async def test_add_artifact_sends_a_new_artifact_and_returns_its_id() -> None:
    task, events = updater()
    artifact_id = await task.add_artifact(
        "result", name="report", description="The report.", metadata={"v": 1}
    )
    event = artifact_event(events[0])
    assert event.artifact.artifact_id == artifact_id and artifact_id
    assert event.artifact.parts == [TextPart(text="result")]
    assert (event.artifact.name, event.artifact.description) == ("report", "The report.")
    assert event.artifact.metadata == {"v": 1}
    assert event.append is None and event.last_chunk is None
    assert await task.add_artifact("other") != artifact_id


async def test_append_artifact_sends_chunks_of_the_same_artifact() -> None:
    task, events = updater()
    artifact_id = await task.add_artifact("a", last_chunk=False)
    await task.append_artifact(artifact_id, "b")
    await task.append_artifact(artifact_id, [TextPart(text="c")], last_chunk=True)
    chunks = [artifact_event(e) for e in events]
    assert {c.artifact.artifact_id for c in chunks} == {artifact_id}
    assert [c.append for c in chunks] == [None, True, True]
    assert [c.last_chunk for c in chunks] == [False, None, True]
    assert artifact_texts(events) == ["a", "b", "c"]


async def test_add_artifact_with_a_given_id_keeps_it() -> None:
    task, events = updater()
    assert await task.add_artifact("x", artifact_id="fixed") == "fixed"
    assert artifact_event(events[0]).artifact.artifact_id == "fixed"


def test_agent_message_is_bound_to_the_task() -> None:
    task, _ = updater()
    message = task.agent_message("hi", metadata={"m": 1})
    assert (message.role, message.text, message.metadata) == (Role.AGENT, "hi", {"m": 1})
    assert (message.task_id, message.context_id) == ("t1", "c1")
    assert message.message_id != task.agent_message("hi").message_id


def test_to_parts_normalises_content() -> None:
    data = DataPart(data={"a": 1})
    assert to_parts("text") == [TextPart(text="text")]
    assert to_parts(data) == [data]
    assert to_parts((TextPart(text="a"), data)) == [TextPart(text="a"), data]


async def test_default_cancel_marks_the_task_canceled() -> None:
    sink = RecordingSink()
    await echo.agent.executor.cancel(context(), sink)
    assert states(sink.events) == [TaskState.CANCELED]


def test_request_context_text_and_new_task() -> None:
    ctx = context("line one")
    ctx.message.parts.append(DataPart(data={}))
    ctx.message.parts.append(TextPart(text="line two"))
    assert ctx.text == "line one\nline two"
    assert ctx.is_new_task


# --- @accord.agent: reply functions ----------------------------------------------------------


async def run(agent: Agent, text: str = "hello") -> list[AgentEvent]:
    sink = RecordingSink()
    await agent.executor.execute(context(text), sink)
    return sink.events


def only_message(events: list[AgentEvent]) -> Message:
    assert len(events) == 1
    assert isinstance(events[0], Message)
    return events[0]


async def test_sync_function_replies_with_a_message() -> None:
    @accord.agent
    def shout(ctx: RequestContext) -> str:
        return ctx.text.upper()

    reply = only_message(await run(shout, "hey"))
    assert (reply.role, reply.text, reply.context_id) == (Role.AGENT, "HEY", "c1")
    assert reply.task_id is None, "a message reply belongs to no task"


async def test_sync_function_runs_off_the_event_loop_thread() -> None:
    threads: list[int] = []

    @accord.agent
    def blocking(ctx: RequestContext) -> str:
        threads.append(threading.get_ident())
        return "done"

    await run(blocking)
    assert threads and threads[0] != threading.get_ident()


async def test_async_function_replies_with_a_message() -> None:
    @accord.agent
    async def answer(ctx: RequestContext) -> str:
        return f"you said {ctx.text}"

    assert only_message(await run(answer, "x")).text == "you said x"


async def test_async_function_returning_parts() -> None:
    data = DataPart(data={"answer": 42})

    @accord.agent
    async def structured(ctx: RequestContext) -> list[Part]:
        return [TextPart(text="see data"), data]

    assert only_message(await run(structured)).parts == [TextPart(text="see data"), data]


async def test_function_returning_one_part() -> None:
    @accord.agent
    async def one(ctx: RequestContext) -> Part:
        return DataPart(data={"n": 1})

    assert only_message(await run(one)).parts == [DataPart(data={"n": 1})]


async def test_async_function_returning_a_message_sends_it_as_is() -> None:
    own = Message.agent("crafted", context_id="c1")

    @accord.agent
    async def crafted(ctx: RequestContext) -> Message:
        return own

    assert only_message(await run(crafted)) is own


@pytest.mark.parametrize("reply", [None, 42, {"text": "dict"}, [TextPart(text="a"), "b"]])
async def test_function_returning_something_else_is_an_invalid_response(reply: Any) -> None:
    @accord.agent
    async def odd(ctx: RequestContext) -> Any:
        return reply

    with pytest.raises(InvalidAgentResponse):
        await run(odd)


async def test_task_mode_answers_with_a_completed_task_holding_the_reply() -> None:
    @accord.agent(task=True)
    def report(ctx: RequestContext) -> str:
        return f"report on {ctx.text}"

    events = await run(report, "sales")
    assert [type(e) for e in events] == [
        TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
    ]
    assert states(events) == [TaskState.WORKING, TaskState.COMPLETED]
    assert artifact_texts(events) == ["report on sales"]


async def test_task_mode_with_a_message_completes_with_that_message() -> None:
    @accord.agent(task=True)
    async def noted(ctx: RequestContext) -> Message:
        return Message.agent("all done")

    events = await run(noted)
    assert states(events) == [TaskState.WORKING, TaskState.COMPLETED]
    completed = status_event(events[-1])
    assert completed.status.message is not None and completed.status.message.text == "all done"
    assert artifact_texts(events) == []


# --- @accord.agent: async generators ---------------------------------------------------------


async def test_generator_text_streams_chunks_of_one_artifact() -> None:
    @accord.agent
    async def words(ctx: RequestContext) -> AsyncIterator[str]:
        for word in ("one ", "two ", "three"):
            yield word

    events = await run(words)
    assert states(events) == [TaskState.WORKING, TaskState.COMPLETED]
    chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert artifact_texts(events) == ["one ", "two ", "three"]
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    assert [c.append for c in chunks] == [None, True, True]
    assert status_event(events[-1]).final


async def test_generator_parts_are_chunks_too() -> None:
    @accord.agent
    async def data(ctx: RequestContext) -> AsyncIterator[Part]:
        yield DataPart(data={"row": 1})
        yield [DataPart(data={"row": 2}), TextPart(text="end")]

    events = await run(data)
    chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert chunks[0].artifact.parts == [DataPart(data={"row": 1})]
    assert chunks[1].artifact.parts == [DataPart(data={"row": 2}), TextPart(text="end")]
    assert chunks[1].append is True


async def test_generator_artifact_is_sent_whole() -> None:
    chart = Artifact(
        artifact_id="chart-1",
        name="chart",
        description="A chart.",
        parts=[DataPart(data={"x": [1, 2]})],
        metadata={"unit": "m"},
    )

    @accord.agent
    async def charts(ctx: RequestContext) -> AsyncIterator[Artifact | str]:
        yield chart
        yield "summary"

    events = await run(charts)
    chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert chunks[0].artifact.model_dump() == chart.model_dump()
    assert chunks[0].append is None
    assert chunks[1].artifact.artifact_id != "chart-1"
    assert states(events) == [TaskState.WORKING, TaskState.COMPLETED]


async def test_generator_asking_for_input_is_not_completed() -> None:
    @accord.agent
    async def asks(ctx: RequestContext) -> AsyncIterator[TaskState | TaskStatus]:
        yield TaskStatus(state=TaskState.INPUT_REQUIRED, message=Message.agent("Which city?"))

    events = await run(asks)
    assert states(events) == [TaskState.WORKING, TaskState.INPUT_REQUIRED]
    question = status_event(events[-1])
    assert question.final
    assert question.status.message is not None and question.status.message.text == "Which city?"


@pytest.mark.parametrize(
    "state", [TaskState.COMPLETED, TaskState.FAILED, TaskState.REJECTED, TaskState.AUTH_REQUIRED]
)
async def test_generator_yielding_a_final_state_ends_there(state: TaskState) -> None:
    @accord.agent
    async def decides(ctx: RequestContext) -> AsyncIterator[TaskState]:
        yield state

    assert states(await run(decides)) == [TaskState.WORKING, state]


async def test_generator_message_is_a_progress_note() -> None:
    @accord.agent
    async def chatty(ctx: RequestContext) -> AsyncIterator[Message | str]:
        yield Message.agent("thinking...")
        yield "answer"

    events = await run(chatty)
    assert states(events) == [TaskState.WORKING, TaskState.WORKING, TaskState.COMPLETED]
    note = status_event(events[1]).status.message
    assert note is not None and note.text == "thinking..."


async def test_generator_keeps_the_state_it_set_for_later_notes() -> None:
    @accord.agent
    async def waits(ctx: RequestContext) -> AsyncIterator[TaskState | Message]:
        yield TaskState.AUTH_REQUIRED
        yield Message.agent("log in at https://example.com")

    events = await run(waits)
    assert states(events) == [TaskState.WORKING, TaskState.AUTH_REQUIRED, TaskState.AUTH_REQUIRED]


# --- Agent and its card ----------------------------------------------------------------------


def test_decorator_names_the_agent_after_the_function_and_its_docstring() -> None:
    @accord.agent
    def travel_planner(ctx: RequestContext) -> str:
        """Plans trips.

        Long description that is not part of the card.
        """
        return "ok"

    assert isinstance(travel_planner, Agent)
    assert isinstance(travel_planner.executor, FunctionExecutor)
    card = travel_planner.card("http://x/")
    assert (card.name, card.description) == ("Travel Planner", "Plans trips.")


def test_decorator_passes_card_options_to_the_agent() -> None:
    skill = AgentSkill(id="s", name="S", description="Does S.", tags=["t"])

    @accord.agent(name="Named", description="Described.", version="3.0.0", skills=[skill])
    async def anything(ctx: RequestContext) -> str:
        return "ok"

    card = anything.card("http://x/")
    assert (card.name, card.description, card.version) == ("Named", "Described.", "3.0.0")
    assert card.skills == [skill]


def test_agent_card_is_a_copy_with_the_given_url() -> None:
    agent = Agent(echo.agent.executor, name="A", input_modes=["text/plain", "image/png"])
    first = agent.card("http://one/")
    second = agent.card("http://two/")
    assert (first.url, second.url) == ("http://one/", "http://two/")
    first.name = "changed"
    assert agent.card("http://one/").name == "A"
    assert first.default_input_modes == ["text/plain", "image/png"]
    assert first.description == "A", "the name stands in for a missing description"
    assert first.capabilities.streaming is True
    assert first.supports_authenticated_extended_card is None


def test_agent_with_an_extended_card_says_so() -> None:
    extended = echo.agent.card("")
    agent = Agent(echo.agent.executor, name="A", streaming=False, extended_card=extended)
    card = agent.card("http://x/")
    assert card.supports_authenticated_extended_card is True
    assert card.capabilities.streaming is False
    assert "A" in repr(agent)


async def test_an_agents_own_routes_are_served_beside_the_a2a_routes() -> None:
    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse(f"hello {request.path_params['name']}")

    agent = Agent(echo.agent.executor, name="A", routes=[Route("/hello/{name}", hello)])
    async with live(agent) as rpc:
        assert (await rpc.http.get("/hello/you")).text == "hello you"
        assert (await rpc.send("still A2A"))["status"]["state"] == "completed"


# --- the echo samples ------------------------------------------------------------------------


def test_echo_samples_describe_themselves() -> None:
    assert echo.agent.name == "Echo"
    assert echo.message_agent.name == "Echo (message)"
    assert "artifact" in echo.agent.card("").description


async def test_echo_agent_answers_with_a_task_holding_one_artifact() -> None:
    async with live(echo.agent) as rpc:
        task = await rpc.send("hello, echo")
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    assert [text_of(a) for a in task["artifacts"]] == ["hello, echo"]


async def test_echo_message_agent_answers_with_a_message() -> None:
    async with live(echo.message_agent) as rpc:
        reply = await rpc.send("hello, echo", context_id="ctx")
    assert reply["kind"] == "message"
    assert (reply["role"], text_of(reply), reply["contextId"]) == ("agent", "hello, echo", "ctx")


async def test_echo_agent_streams_its_answer() -> None:
    async with live(echo.agent) as rpc:
        params = {"message": Message.user("streamed").to_wire()}
        async with rpc.stream("message/stream", params) as stream:
            events = await stream.rest()
    assert [e.result["kind"] for e in events] == [
        "task",
        "status-update",
        "artifact-update",
        "status-update",
    ]
    assert text_of(events[2].result["artifact"]) == "streamed"


async def test_a_changed_card_changes_what_the_server_accepts() -> None:
    """Output modes and capabilities are checked against the card as it is now."""

    @accord.agent(name="Changes", output_modes=["text/plain"])
    async def changes(context: RequestContext) -> str:
        return context.text

    async with agent_client(changes) as client:
        with pytest.raises(ContentTypeNotSupported):
            await client.send("hi", accepted_output_modes=["text/csv"])
        card = changes.card("")
        changes.change_card(card.model_copy(update={"default_output_modes": ["text/csv"]}))
        reply = await client.send("hi", accepted_output_modes=["text/csv"])
        assert isinstance(reply, Message) and reply.text == "hi"
