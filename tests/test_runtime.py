"""TaskRuntime without a server: records and their numbers, store, bus, failures, cancel, watch."""

from __future__ import annotations

import asyncio
import json
from asyncio import Future
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest

import accord
from accord import AgentExecutor, RequestContext, TaskUpdater
from accord.agents import EventSink
from accord.core.deliveries import Delivery
from accord.errors import (
    ContentTypeNotSupported,
    InternalError,
    InvalidAgentResponse,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
)
from accord.runtime import EventRecord, InProcessEventBus, TaskRuntime, bus, replicas
from accord.runtime.lifecycle import EVENTS_PER_TURN
from accord.runtime.publishing import AHEAD
from accord.samples import echo
from accord.store import InMemoryTaskStore
from accord.types import (
    Message,
    MessageSendParams,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from agents_for_tests import (
    SAFETY_TIMEOUT,
    AsksThenCompletes,
    AsksThenQuits,
    Gate,
    GatedStreamer,
    GoesBackToSubmitted,
    NeverFinishes,
    Raises,
    ReturnsUnfinished,
    SendsUnserializable,
    Silent,
    rejects_before_task,
)
from stores import Backend, backend_fixture  # noqa: F401 - fixtures

RuntimeFactory = Callable[[AgentExecutor], TaskRuntime]


@pytest.fixture
async def make_runtime() -> AsyncIterator[RuntimeFactory]:
    """Builds runtimes over fresh memory stores and buses; stops their runs afterwards."""
    runtimes: list[TaskRuntime] = []

    def make(executor: AgentExecutor) -> TaskRuntime:
        runtime = TaskRuntime(executor, InMemoryTaskStore(), InProcessEventBus())
        runtimes.append(runtime)
        return runtime

    yield make
    for runtime in runtimes:
        await runtime.close()


def params(text: str = "hello", **message: Any) -> MessageSendParams:
    return MessageSendParams(message=Message.user(text, **message))


async def collect(records: AsyncIterator[EventRecord]) -> list[EventRecord]:
    """Every record until the iterator ends (it ends after the final one)."""
    async with asyncio.timeout(SAFETY_TIMEOUT):
        return [record async for record in records]


async def run_to_end(
    runtime: TaskRuntime, text: str = "hello", **message: Any
) -> list[EventRecord]:
    return await collect(await runtime.start(params(text, **message)))


def store_of(runtime: TaskRuntime) -> InMemoryTaskStore:
    assert isinstance(runtime.store, InMemoryTaskStore)
    return runtime.store


def bus_of(runtime: TaskRuntime) -> InProcessEventBus:
    assert isinstance(runtime.bus, InProcessEventBus)
    return runtime.bus


def final_status(records: list[EventRecord]) -> TaskStatusUpdateEvent:
    last = records[-1]
    assert last.final
    assert isinstance(last.event, TaskStatusUpdateEvent)
    return last.event


def status_text(event: TaskStatusUpdateEvent) -> str:
    assert event.status.message is not None
    return event.status.message.text


# --- records ---------------------------------------------------------------------------------


async def test_records_of_a_task_run_in_order_and_end_with_the_final_one(
    make_runtime: RuntimeFactory,
) -> None:
    records = await run_to_end(make_runtime(echo.agent.executor), "ping")
    kinds = [type(r.event).__name__ for r in records]
    status, artifact = "TaskStatusUpdateEvent", "TaskArtifactUpdateEvent"
    assert kinds == ["Task", status, artifact, status]
    assert [r.final for r in records] == [False, False, False, True]
    assert final_status(records).status.state is TaskState.COMPLETED
    assert len({r.task_id for r in records}) == 1


async def test_an_execution_skipping_to_the_final_record_yields_only_that_one(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(echo.agent.executor)
    execution = await runtime.start(params("ping"))
    execution.skip_to_final()
    with runtime.bus.subscribe(execution.task_id) as other:  # the agent has not run yet
        records = await collect(execution)
        assert [(r.seq, r.final) for r in records] == [(4, True)]
        # Everyone else watching the task still sees every record.
        async with asyncio.timeout(SAFETY_TIMEOUT):
            assert [(await anext(other)).seq for _ in range(4)] == [1, 2, 3, 4]


async def test_an_agent_that_awaits_nothing_else_still_lets_its_stream_go_first(
    make_runtime: RuntimeFactory,
) -> None:
    chunks = 200
    progress: list[int] = []

    class Chatty(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventSink) -> None:
            updater = TaskUpdater(context, events)
            await updater.start_work()
            for index in range(chunks):
                progress.append(index)
                await updater.add_artifact(str(index), artifact_id="a", append=index > 0)
            await updater.complete()

    execution = await make_runtime(Chatty()).start(params())
    async with asyncio.timeout(SAFETY_TIMEOUT):
        async for record in execution:
            if isinstance(record.event, TaskArtifactUpdateEvent):
                break
    # The memory store never suspends the agent: without turns it would be done by now.
    assert len(progress) < chunks / 4
    execution.close()


async def test_sequence_numbers_count_from_one_per_task(make_runtime: RuntimeFactory) -> None:
    runtime = make_runtime(echo.agent.executor)
    first = await run_to_end(runtime, "one")
    second = await run_to_end(runtime, "two")
    assert first[0].task_id != second[0].task_id
    for records in (first, second):
        assert [r.seq for r in records] == list(range(1, len(records) + 1))


async def test_payload_is_the_json_of_the_event_when_it_happened(
    make_runtime: RuntimeFactory,
) -> None:
    agent = GatedStreamer(chunks=3)
    agent.release_all()
    records = await run_to_end(make_runtime(agent))
    snapshot = json.loads(records[0].payload)
    assert snapshot["kind"] == "task"
    assert snapshot["status"]["state"] == "submitted", "later events never rewrite a payload"
    chunks = [
        json.loads(r.payload) for r in records if isinstance(r.event, TaskArtifactUpdateEvent)
    ]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == ["chunk 0", "chunk 1", "chunk 2"]
    assert [len(c["artifact"]["parts"]) for c in chunks] == [1, 1, 1]
    for record in records:
        assert record.event is not None
        assert json.loads(record.payload)["kind"] == record.event.kind


async def test_each_record_is_saved_before_it_is_published(make_runtime: RuntimeFactory) -> None:
    log: list[tuple[str, int]] = []

    class LoggingStore(InMemoryTaskStore):
        def stage_records(
            self,
            task: Task,
            records: Sequence[EventRecord],
            *,
            owner: str = "",
            outbox: Sequence[Delivery] = (),
            epoch: int = 0,
            task_json: bytes | None = None,
        ) -> Future[None]:
            saved = super().stage_records(
                task, records, owner=owner, outbox=outbox, epoch=epoch, task_json=task_json
            )
            assert saved.done()  # the memory store saves at once
            log.extend(("save", record.seq) for record in records)
            return saved

    class LoggingBus(InProcessEventBus):
        async def publish(self, record: EventRecord) -> None:
            log.append(("publish", record.seq))
            await super().publish(record)

    runtime = TaskRuntime(echo.agent.executor, LoggingStore(), LoggingBus())
    records = await run_to_end(runtime)
    seqs = [record.seq for record in records]
    assert sorted(log) == sorted((step, seq) for seq in seqs for step in ("save", "publish"))
    assert [seq for step, seq in log if step == "publish"] == seqs
    for seq in seqs:
        assert log.index(("save", seq)) < log.index(("publish", seq))


async def turns_until(condition: Callable[[], bool], turns: int = 1000) -> None:
    """Let the event loop run until `condition` holds."""
    for _ in range(turns):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"still not so after {turns} turns of the event loop")


class HeldStore(InMemoryTaskStore):
    """Keeps each save at once, but reports the records from event `held_from` on committed
    only when the test says so (`commit`, in the order they were staged); a save of several
    records is committed once all of them are."""

    def __init__(self, held_from: int) -> None:
        super().__init__()
        self.held_from = held_from
        self.held: list[asyncio.Future[None]] = []

    def stage_records(
        self,
        task: Task,
        records: Sequence[EventRecord],
        *,
        owner: str = "",
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
        task_json: bytes | None = None,
    ) -> Future[None]:
        saved = super().stage_records(
            task, records, owner=owner, outbox=outbox, epoch=epoch, task_json=task_json
        )
        loop = asyncio.get_running_loop()
        held = [loop.create_future() for record in records if record.seq >= self.held_from]
        if not held:
            return saved
        self.held += held

        async def all_committed() -> None:
            await asyncio.gather(*held)

        return asyncio.ensure_future(all_committed())

    def commit(self, count: int) -> None:
        for saved in self.held[:count]:
            if not saved.done():
                saved.set_result(None)


@accord.agent(name="Ten chunks", description="Streams ten chunks.")
async def ten_chunks(context: RequestContext) -> AsyncIterator[str]:
    for n in range(10):
        yield f"chunk {n}"


async def test_records_go_ahead_of_their_saves_and_publish_once_committed() -> None:
    published: list[int] = []

    class LoggingBus(InProcessEventBus):
        async def publish(self, record: EventRecord) -> None:
            published.append(record.seq)
            await super().publish(record)

    store = HeldStore(held_from=4)  # the task, working and the first chunk commit at once
    runtime = TaskRuntime(ten_chunks.executor, store, LoggingBus())
    execution = await runtime.start(params("go"))
    await turns_until(lambda: len(store.held) == 10)  # nine more chunks, then completed
    for _ in range(20):
        await asyncio.sleep(0)
    assert published == [1, 2, 3][: len(published)]  # those saved with held ones wait
    store.commit(2)
    for _ in range(20):
        await asyncio.sleep(0)
    assert published == list(range(1, len(published) + 1)) and len(published) <= 5
    store.commit(10)
    records = await collect(execution)

    assert published == list(range(1, 14))
    assert [record.seq for record in records] == published
    assert records[-1].final


async def test_a_run_waits_only_for_the_save_of_its_final_record() -> None:
    published: list[int] = []

    class LoggingBus(InProcessEventBus):
        async def publish(self, record: EventRecord) -> None:
            published.append(record.seq)
            await super().publish(record)

    store = HeldStore(held_from=1)  # nothing commits until the test says so
    runtime = TaskRuntime(echo.agent.executor, store, LoggingBus())
    execution = await runtime.start(params("ping"))
    # The task, working, the answer and completed are all staged, as one save (the agent made
    # them in one turn of the event loop). Nothing is published before that save commits.
    await turns_until(lambda: len(store.held) == 4)
    store.commit(3)
    for _ in range(20):
        await asyncio.sleep(0)
    assert (len(store.held), published) == (4, [])

    store.commit(4)
    records = await collect(execution)
    assert published == [1, 2, 3, 4]
    assert records[-1].final and records[-1].seq == 4


@accord.agent(name="Thousand chunks", description="Streams a thousand chunks.")
async def thousand_chunks(context: RequestContext) -> AsyncIterator[str]:
    for n in range(1000):
        yield f"chunk {n}"


async def test_an_agent_runs_only_so_far_ahead_of_its_saves() -> None:
    store = HeldStore(held_from=4)
    runtime = TaskRuntime(thousand_chunks.executor, store)
    execution = await runtime.start(params("go"))
    # The agent could go on: it waits for its saves instead, give or take a turn's records.
    await turns_until(lambda: len(store.held) >= AHEAD - EVENTS_PER_TURN)
    for _ in range(100):
        await asyncio.sleep(0)
    assert AHEAD - EVENTS_PER_TURN <= len(store.held) <= AHEAD + EVENTS_PER_TURN
    ahead = len(store.held)

    store.commit(ahead // 2 + EVENTS_PER_TURN)
    await turns_until(lambda: len(store.held) > ahead)
    for _ in range(100):
        await asyncio.sleep(0)
    assert ahead < len(store.held) <= ahead + AHEAD // 2 + 2 * EVENTS_PER_TURN

    async def commit_as_staged() -> None:
        while not execution.task or not execution.task.status.state.is_terminal:
            store.commit(len(store.held))
            await asyncio.sleep(0)
        store.commit(len(store.held))

    committing = asyncio.create_task(commit_as_staged())
    records = await collect(execution)
    await committing
    assert [record.seq for record in records] == list(range(1, 1004))


async def test_store_keeps_the_task_and_its_event_log(make_runtime: RuntimeFactory) -> None:
    runtime = make_runtime(echo.agent.executor)
    records = await run_to_end(runtime, "ping")
    stored = await runtime.store.get(records[0].task_id)
    assert stored is not None
    assert stored.seq == records[-1].seq
    assert stored.task.status.state is TaskState.COMPLETED
    logged = await runtime.store.events_after(records[0].task_id, 0)
    assert [(r.seq, r.payload) for r in logged] == [(r.seq, r.payload) for r in records]
    assert [r.seq for r in await runtime.store.events_after(records[0].task_id, 2)] == [3, 4]


async def test_message_reply_is_one_final_record_and_no_task(make_runtime: RuntimeFactory) -> None:
    runtime = make_runtime(echo.message_agent.executor)
    records = await run_to_end(runtime, "ping", context_id="ctx-1")
    assert len(records) == 1
    record = records[0]
    assert (record.seq, record.final, record.error) == (0, True, None)
    assert isinstance(record.event, Message)
    assert record.event.text == "ping"
    assert record.event.context_id == "ctx-1"
    assert len(store_of(runtime)) == 0
    with pytest.raises(TaskNotFound):
        await runtime.get_task(record.task_id)


async def test_nothing_may_follow_a_message_reply(make_runtime: RuntimeFactory) -> None:
    caught: list[Exception] = []
    done = Gate("done")

    class RepliesThenWorks(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventSink) -> None:
            await events.send(Message.agent("answer"))
            try:
                await TaskUpdater(context, events).start_work()
            except InvalidAgentResponse as exc:
                caught.append(exc)
            done.open()

    runtime = make_runtime(RepliesThenWorks())
    records = await run_to_end(runtime)
    assert [type(r.event) for r in records] == [Message]
    await done.wait()
    assert len(caught) == 1
    assert len(store_of(runtime)) == 0


async def test_subscriptions_are_released_when_runs_and_watches_end(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(AsksThenCompletes())
    records = await run_to_end(runtime)
    task_id = records[0].task_id
    watch = runtime.watch(task_id)
    assert await anext(watch)
    await watch.aclose()  # left while the task waits for input
    assert bus_of(runtime).subscriber_count(task_id) == 0
    watch = runtime.watch(task_id)
    assert await anext(watch)
    await run_to_end(runtime, "Ada", task_id=task_id)
    assert await collect(watch)  # followed to the end of the task
    assert bus_of(runtime).subscriber_count(task_id) == 0


# --- failures --------------------------------------------------------------------------------


async def test_agent_that_raises_fails_the_task_naming_the_error(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(Raises(RuntimeError("the database is gone")))
    records = await run_to_end(runtime)
    failed = final_status(records)
    assert failed.status.state is TaskState.FAILED
    assert "The agent failed (reference " in status_text(failed)
    assert "the database is gone" not in status_text(failed)
    stored = await runtime.store.get(records[0].task_id)
    assert stored is not None and stored.task.status.state is TaskState.FAILED


async def test_agent_that_raises_before_any_event_still_leaves_a_failed_task(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(Raises(ValueError("bad input"), after_start=False))
    runtime.debug = True
    records = await run_to_end(runtime)
    assert isinstance(records[0].event, Task)
    assert final_status(records).status.state is TaskState.FAILED
    assert "ValueError: bad input" in status_text(final_status(records))


async def test_agent_that_returns_without_finishing_fails_the_task(
    make_runtime: RuntimeFactory,
) -> None:
    records = await run_to_end(make_runtime(ReturnsUnfinished()))
    failed = final_status(records)
    assert failed.status.state is TaskState.FAILED
    assert "without finishing" in status_text(failed)


async def test_agent_emitting_an_illegal_transition_fails_the_task(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(GoesBackToSubmitted())
    records = await run_to_end(runtime)
    failed = final_status(records)
    assert failed.status.state is TaskState.FAILED
    assert "submitted" in status_text(failed)
    states = [r.event.status.state for r in records if isinstance(r.event, TaskStatusUpdateEvent)]
    assert TaskState.SUBMITTED not in states, "the illegal event is never published"


async def test_protocol_error_before_any_event_reaches_the_caller_and_no_task_is_stored(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(rejects_before_task(ContentTypeNotSupported("no images, please")))
    records = await run_to_end(runtime)
    assert len(records) == 1
    error = records[0].error
    assert isinstance(error, ContentTypeNotSupported)
    assert (error.code, error.message) == (-32005, "no images, please")
    assert records[0].event is None and records[0].final
    assert len(store_of(runtime)) == 0


async def test_event_that_cannot_be_serialized_is_refused_and_fails_the_task(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(SendsUnserializable())
    records = await run_to_end(runtime)
    failed = final_status(records)
    assert failed.status.state is TaskState.FAILED
    assert "cannot be serialized" in status_text(failed)
    task = await runtime.get_task(records[0].task_id)
    assert task.artifacts is not None and len(task.artifacts) == 1, "the bad artifact is not kept"
    assert json.loads(task.to_json())["status"]["state"] == "failed"
    assert [r.seq for r in records] == list(range(1, len(records) + 1))


async def test_reply_that_cannot_be_serialized_is_an_invalid_agent_response(
    make_runtime: RuntimeFactory,
) -> None:
    records = await run_to_end(make_runtime(SendsUnserializable(as_message=True)))
    assert len(records) == 1
    assert isinstance(records[0].error, InvalidAgentResponse)
    assert "cannot be serialized" in records[0].error.message


async def test_first_task_that_cannot_be_serialized_is_refused_and_stores_nothing(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(SendsUnserializable(as_task=True))
    records = await run_to_end(runtime)
    assert len(records) == 1
    assert isinstance(records[0].error, InvalidAgentResponse)
    assert "task that cannot be serialized" in records[0].error.message
    assert len(store_of(runtime)) == 0


async def test_agent_that_sends_nothing_is_an_invalid_agent_response(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(Silent())
    records = await run_to_end(runtime)
    assert len(records) == 1
    assert isinstance(records[0].error, InvalidAgentResponse)
    assert len(store_of(runtime)) == 0


async def test_closing_an_execution_early_does_not_stop_the_agent(
    make_runtime: RuntimeFactory,
) -> None:
    agent = GatedStreamer(chunks=1)
    runtime = make_runtime(agent)
    execution = await runtime.start(params())
    first = await anext(execution)
    execution.close()
    agent.release_all()
    await agent.finished.wait()
    task = await runtime.get_task(first.task_id)
    assert task.status.state is TaskState.COMPLETED


# --- multi-turn ------------------------------------------------------------------------------


async def test_resuming_an_interrupted_task_continues_its_records_and_history(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(AsksThenCompletes())
    first = await run_to_end(runtime, "hi")
    assert final_status(first).status.state is TaskState.INPUT_REQUIRED
    task_id = first[0].task_id
    second = await run_to_end(runtime, "Ada", task_id=task_id)
    assert [r.seq for r in second] == list(
        range(first[-1].seq + 1, first[-1].seq + 1 + len(second))
    )
    assert isinstance(second[0].event, Task), "a resumed run starts with the task"
    assert final_status(second).status.state is TaskState.COMPLETED
    task = await runtime.get_task(task_id)
    history = [(m.role.value, m.text) for m in task.history or []]
    assert history == [
        ("user", "hi"),
        ("agent", AsksThenCompletes.QUESTION),
        ("user", "Ada"),
    ]
    assert task.artifacts is not None
    assert task.artifacts[0].parts == [TextPart(text="Hello, Ada!")]


async def test_resumed_run_that_returns_without_a_word_fails_the_task(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(AsksThenQuits())
    task_id = (await run_to_end(runtime))[0].task_id
    records = await run_to_end(runtime, "here you are", task_id=task_id)
    failed = final_status(records)
    assert failed.status.state is TaskState.FAILED
    assert "without finishing" in status_text(failed)


async def test_run_that_leaves_an_interrupted_state_unfinished_fails_the_task(
    make_runtime: RuntimeFactory,
) -> None:
    carry_on = Gate("carry on")

    class AsksThenCarriesOn(AgentExecutor):
        async def execute(self, context: RequestContext, events: EventSink) -> None:
            updater = TaskUpdater(context, events)
            await updater.requires_input("name?")
            await carry_on.wait()
            await updater.start_work("never mind")

    runtime = make_runtime(AsksThenCarriesOn())
    execution = await runtime.start(params())
    assert final_status(await collect(execution)).status.state is TaskState.INPUT_REQUIRED
    with runtime.bus.subscribe(execution.task_id) as subscription:
        carry_on.open()
        async with asyncio.timeout(SAFETY_TIMEOUT):
            later = [await anext(subscription), await anext(subscription)]
    assert [r.event.status.state for r in later if isinstance(r.event, TaskStatusUpdateEvent)] == [
        TaskState.WORKING,
        TaskState.FAILED,
    ]
    assert later[-1].final


async def test_a_running_task_takes_no_second_message(make_runtime: RuntimeFactory) -> None:
    agent = NeverFinishes()
    runtime = make_runtime(agent)
    execution = await runtime.start(params())
    await agent.started.wait()
    with pytest.raises(UnsupportedOperation):
        await runtime.start(params("again", task_id=execution.task_id))
    execution.close()


# --- watch -----------------------------------------------------------------------------------


async def test_watch_gives_the_current_task_then_live_records(
    make_runtime: RuntimeFactory,
) -> None:
    agent = GatedStreamer(chunks=2)
    runtime = make_runtime(agent)
    execution = await runtime.start(params())
    await agent.started.wait()
    watch = runtime.watch(execution.task_id)
    snapshot = await anext(watch)
    assert isinstance(snapshot.event, Task)
    assert json.loads(snapshot.payload)["status"]["state"] == "working"
    agent.release_all()
    live = await collect(watch)
    original = await collect(execution)
    assert [r.seq for r in live] == [r.seq for r in original if r.seq > snapshot.seq]
    assert [r.payload for r in live] == [r.payload for r in original if r.seq > snapshot.seq]
    assert live[-1].final


async def test_watch_of_a_task_waiting_for_input_follows_the_next_turn_to_its_end(
    make_runtime: RuntimeFactory,
) -> None:
    runtime = make_runtime(AsksThenCompletes())
    task_id = (await run_to_end(runtime))[0].task_id
    watch = runtime.watch(task_id)
    first = await anext(watch)
    assert json.loads(first.payload)["status"]["state"] == "input-required"
    assert not first.final  # the watch goes on: the task is not over
    await run_to_end(runtime, "Ada", task_id=task_id)
    records = await collect(watch)
    states = [
        json.loads(r.payload)["status"]["state"]
        for r in records
        if not isinstance(r.event, TaskArtifactUpdateEvent)
    ]
    assert states == ["input-required", "working", "completed"]
    assert [r.seq for r in records] == list(range(first.seq + 1, first.seq + 1 + len(records)))


# --- cancel ----------------------------------------------------------------------------------


class PausesWhenAskedToCancel(InProcessEventBus):
    """A bus on which the replica running a task publishes `answer` when asked to cancel it:
    a task that paused for input just before the request reached its run, or one canceled."""

    def __init__(self, answer: EventRecord) -> None:
        super().__init__()
        self.answer = answer

    async def request_cancel(self, task_id: str) -> None:
        await self.publish(self.answer)


def status_record(state: TaskState) -> EventRecord:
    event = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=state), final=True
    )
    return EventRecord.of("t", 3, event, final=True)


async def test_a_cancel_relayed_to_another_replica_waits_for_the_end_not_a_pause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(replicas, "HANDOVER_TIMEOUT", 0.05)
    bus = PausesWhenAskedToCancel(status_record(TaskState.INPUT_REQUIRED))
    runtime = TaskRuntime(echo.agent.executor, InMemoryTaskStore(), bus)
    assert not await runtime.replicas.cancel_elsewhere("t"), "a pause is no cancel: act here"
    bus.answer = status_record(TaskState.CANCELED)
    assert await runtime.replicas.cancel_elsewhere("t")


async def test_cancel_calls_the_agent_and_ends_the_task_canceled(
    make_runtime: RuntimeFactory,
) -> None:
    agent = NeverFinishes()
    runtime = make_runtime(agent)
    execution = await runtime.start(params())
    await agent.started.wait()
    task = await runtime.cancel(execution.task_id)
    assert agent.cancel_called.is_open
    assert task.status.state is TaskState.CANCELED
    records = await collect(execution)
    assert final_status(records).status.state is TaskState.CANCELED
    assert status_text(final_status(records)) == "stopped on request"
    await agent.stopped.wait()


async def test_cancel_still_cancels_when_the_agents_cancel_raises(
    make_runtime: RuntimeFactory,
) -> None:
    class BrokenCancel(NeverFinishes):
        async def cancel(self, context: RequestContext, events: EventSink) -> None:
            raise RuntimeError("cannot stop")

    agent = BrokenCancel()
    runtime = make_runtime(agent)
    execution = await runtime.start(params())
    await agent.started.wait()
    task = await runtime.cancel(execution.task_id)
    assert task.status.state is TaskState.CANCELED
    assert final_status(await collect(execution)).status.state is TaskState.CANCELED


async def test_cancel_of_a_task_waiting_for_input(make_runtime: RuntimeFactory) -> None:
    runtime = make_runtime(AsksThenCompletes())
    task_id = (await run_to_end(runtime))[0].task_id
    task = await runtime.cancel(task_id)
    assert task.status.state is TaskState.CANCELED
    stored = await runtime.store.get(task_id)
    assert stored is not None and stored.task.status.state is TaskState.CANCELED
    with pytest.raises(UnsupportedOperation):
        await runtime.start(params("too late", task_id=task_id))


@pytest.mark.parametrize("pause", [TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED])
async def test_cancel_of_a_task_waiting_for_input_calls_the_agents_cancel_with_the_task(
    make_runtime: RuntimeFactory, pause: TaskState
) -> None:
    seen: list[tuple[RequestContext, TaskState | None]] = []

    class CleansUp(AsksThenCompletes):
        async def cancel(self, context: RequestContext, events: EventSink) -> None:
            seen.append((context, context.task.status.state if context.task else None))
            await TaskUpdater(context, events).cancel("cleaned up")

    runtime = make_runtime(CleansUp(pause))
    task_id = (await run_to_end(runtime))[0].task_id
    task = await runtime.cancel(task_id)
    assert [(context.task_id, state) for context, state in seen] == [(task_id, pause)]
    assert seen[0][0].text == "hello"  # the message the task last received
    assert task.status.state is TaskState.CANCELED
    assert task.status.message is not None and task.status.message.text == "cleaned up"
    stored = await runtime.store.get(task_id)
    assert stored is not None and stored.task.status.state is TaskState.CANCELED


async def test_an_agents_refusal_to_cancel_a_waiting_task_is_kept(
    make_runtime: RuntimeFactory,
) -> None:
    class Refuses(AsksThenCompletes):
        async def cancel(self, context: RequestContext, events: EventSink) -> None:
            raise TaskNotCancelable("this one must be answered")

    runtime = make_runtime(Refuses())
    task_id = (await run_to_end(runtime))[0].task_id
    with pytest.raises(TaskNotCancelable, match="must be answered"):
        await runtime.cancel(task_id)
    assert (await runtime.get_task(task_id)).status.state is TaskState.INPUT_REQUIRED
    # No run is left behind: the task still takes its answer.
    records = await run_to_end(runtime, "Ada", task_id=task_id)
    assert final_status(records).status.state is TaskState.COMPLETED


async def test_a_failing_cancel_hook_still_cancels_a_waiting_task(
    make_runtime: RuntimeFactory,
) -> None:
    class BrokenCancel(AsksThenCompletes):
        async def cancel(self, context: RequestContext, events: EventSink) -> None:
            raise RuntimeError("cannot stop")

    runtime = make_runtime(BrokenCancel())
    task_id = (await run_to_end(runtime))[0].task_id
    assert (await runtime.cancel(task_id)).status.state is TaskState.CANCELED


async def test_cancel_of_a_finished_task_is_refused(make_runtime: RuntimeFactory) -> None:
    runtime = make_runtime(echo.agent.executor)
    task_id = (await run_to_end(runtime))[0].task_id
    with pytest.raises(TaskNotCancelable):
        await runtime.cancel(task_id)
    assert (await runtime.get_task(task_id)).status.state is TaskState.COMPLETED


async def test_cancel_of_an_unknown_task(make_runtime: RuntimeFactory) -> None:
    with pytest.raises(TaskNotFound):
        await make_runtime(echo.agent.executor).cancel("no-such-task")


async def test_close_stops_running_agents_and_keeps_their_last_state(
    make_runtime: RuntimeFactory,
) -> None:
    agent = NeverFinishes()
    runtime = make_runtime(agent)
    execution = await runtime.start(params())
    await agent.started.wait()
    await runtime.close()
    assert agent.stopped.is_open
    stored = await runtime.store.get(execution.task_id)
    assert stored is not None and stored.task.status.state is TaskState.WORKING
    assert not agent.cancel_called.is_open
    execution.close()


class FailingSaves(InMemoryTaskStore):
    """Fails every save that holds an event past the first `good`, as a broken database would."""

    def __init__(self, good: int) -> None:
        super().__init__()
        self.good = good

    def stage_records(
        self,
        task: Task,
        records: Sequence[EventRecord],
        *,
        owner: str = "",
        outbox: Sequence[Delivery] = (),
        epoch: int = 0,
        task_json: bytes | None = None,
    ) -> Future[None]:
        if records[-1].seq <= self.good:
            return super().stage_records(
                task, records, owner=owner, outbox=outbox, epoch=epoch, task_json=task_json
            )
        failed = asyncio.get_running_loop().create_future()
        failed.set_exception(OSError("disk I/O error"))
        return failed


@pytest.mark.parametrize("good", [0, 5, 12])
async def test_a_store_failing_mid_run_ends_the_request_with_an_error_not_a_hang(
    good: int,
) -> None:
    runtime = TaskRuntime(ten_chunks.executor, FailingSaves(good))
    execution = await runtime.start(params("ping"))
    async with asyncio.timeout(5):
        records = await collect(execution)
    assert records[-1].final
    assert isinstance(records[-1].error, InternalError)
    assert "reference" in records[-1].error.message


@accord.agent(name="Fifteen hundred", description="Streams 1,500 chunks as fast as it can.")
async def fifteen_hundred(context: RequestContext) -> AsyncIterator[str]:
    for n in range(1500):
        yield f"{n:04d}"


async def test_a_stream_that_falls_behind_catches_up_from_the_log(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bus, "MAX_PENDING_RECORDS", 100)
    runtime = TaskRuntime(fifteen_hundred.executor, await backend.open())
    try:
        execution = await runtime.start(params("go"))
        seqs, texts = [], []
        async with asyncio.timeout(SAFETY_TIMEOUT * 3):
            async for record in execution:  # a reader slower than the agent
                seqs.append(record.seq)
                if isinstance(record.event, TaskArtifactUpdateEvent):
                    texts += [part.text for part in record.event.artifact.parts]  # type: ignore[union-attr]
                await asyncio.sleep(0.001)
        watched = [r.seq async for r in runtime.watch(execution.task_id, after_seq=1)]
    finally:
        await runtime.close()
    assert seqs == list(range(1, seqs[-1] + 1)), "every record, in order, none twice"
    assert texts == [f"{n:04d}" for n in range(1500)]
    assert watched == seqs[1:]
