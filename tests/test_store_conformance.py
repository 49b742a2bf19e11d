"""The TaskStore contract, one suite for every backend: memory, SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from accord.core import ANONYMOUS_OWNER
from accord.core.push import TASK_SNAPSHOTS, PushTarget
from accord.core.records import EventRecord
from accord.errors import InvalidParams
from accord.store import CleanupReport, Retention, StaleTaskError, TaskQuery, TaskStore
from accord.types import (
    Artifact,
    DataPart,
    Message,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    new_id,
)
from stores import Backend, backend_fixture, store_fixture  # noqa: F401 - fixtures
from task_streams import Stream

NOON = "2024-05-01T12:00:00.000Z"


def make_task(
    task_id: str | None = None,
    *,
    context_id: str = "ctx",
    state: TaskState = TaskState.SUBMITTED,
    at: str | None = NOON,
    text: str = "hello",
) -> Task:
    task_id = task_id or new_id()
    message = Message(
        message_id=new_id(),
        role=Role.USER,
        parts=[TextPart(text=text)],
        task_id=task_id,
        context_id=context_id,
    )
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=at),
        history=[message],
    )


def moved(task: Task, state: TaskState, at: str = NOON) -> Task:
    """A copy of `task` in another state."""
    return task.model_copy(update={"status": TaskStatus(state=state, timestamp=at)})


async def save(store: TaskStore, task: Task, seq: int = 1, *, final: bool = False) -> EventRecord:
    """Save `task` at `seq` with the task itself as the logged event."""
    record = EventRecord.of(task.id, seq, task, final=final)
    await store.save(task, seq, record)
    return record


async def save_versions(store: TaskStore, task: Task, count: int) -> None:
    """Save `task` at sequence numbers 1 to `count` (working before the last when it is
    finished: a finished task takes no more saves)."""
    for seq in range(1, count):
        await save(store, moved(task, TaskState.WORKING, task.status.timestamp or NOON), seq)
    await save(store, task, count)


def ids(tasks: list[Task]) -> list[str]:
    return [task.id for task in tasks]


# --- get and save ---------------------------------------------------------------------------


async def test_a_task_never_saved_is_none(store: TaskStore) -> None:
    assert await store.get("no-such-task") is None


async def test_a_saved_task_comes_back_as_it_was(store: TaskStore) -> None:
    task = make_task(text='héllo ✓ "quoted" \\ and\nnewline')
    task.artifacts = [
        Artifact(artifact_id="a1", name="result", parts=[DataPart(data={"n": [1, 2.5, None]})])
    ]
    task.metadata = {"nested": {"deep": True}, "unicode": "日本"}
    await save(store, task)

    stored = await store.get(task.id)

    assert stored is not None
    assert stored.seq == 1
    assert stored.task.to_json() == task.to_json()


async def test_each_save_replaces_the_task_and_its_version(store: TaskStore) -> None:
    task = make_task()
    await save(store, task)
    working = moved(task, TaskState.WORKING, "2024-05-01T12:00:01.000Z")
    await save(store, working, 2)

    stored = await store.get(task.id)

    assert stored is not None
    assert (stored.seq, stored.task.to_json()) == (2, working.to_json())


async def test_a_save_must_follow_the_stored_version(store: TaskStore) -> None:
    task = make_task()
    with pytest.raises(StaleTaskError):
        await save(store, task, 2)  # nothing stored yet: only seq 1 creates
    await save(store, task, 1)
    for stale_seq in (1, 3, 7):
        with pytest.raises(StaleTaskError):
            await save(store, moved(task, TaskState.FAILED), stale_seq)

    stored = await store.get(task.id)
    assert stored is not None
    assert (stored.seq, stored.task.status.state) == (1, TaskState.SUBMITTED)
    assert [r.seq for r in await store.events_after(task.id, 0)] == [1]


async def test_records_staged_as_one_save_are_all_kept_or_none(store: TaskStore) -> None:
    task = make_task()
    working = moved(task, TaskState.WORKING, "2024-05-01T12:00:01.000Z")
    done = moved(working, TaskState.COMPLETED, "2024-05-01T12:00:02.000Z")
    records = [
        EventRecord.of(task.id, seq, step, final=step is done)
        for seq, step in enumerate((task, working, done), start=1)
    ]
    await store.stage_records(done, records)

    stored = await store.get(task.id)
    assert stored is not None
    assert (stored.seq, stored.task.to_json()) == (3, done.to_json())
    assert [r.payload for r in await store.events_after(task.id, 0)] == [
        step.to_json() for step in (task, working, done)
    ]
    later = [EventRecord.of(task.id, seq, done, final=True) for seq in (3, 4)]  # 3 is taken
    with pytest.raises(StaleTaskError):
        await store.stage_records(moved(done, TaskState.FAILED), later)
    stored = await store.get(task.id)
    assert stored is not None and (stored.seq, stored.task.to_json()) == (3, done.to_json())
    assert [r.seq for r in await store.events_after(task.id, 0)] == [1, 2, 3]


async def test_a_stale_save_fails_alone_among_saves_made_at_once(store: TaskStore) -> None:
    older, newer = make_task(), make_task()
    await save(store, older)
    working = moved(older, TaskState.WORKING, "2024-05-01T12:00:01.000Z")

    outcomes = await asyncio.gather(
        save(store, working, 2),
        save(store, moved(older, TaskState.FAILED), 5),
        save(store, newer),
        return_exceptions=True,
    )

    assert isinstance(outcomes[0], EventRecord) and isinstance(outcomes[2], EventRecord)
    assert isinstance(outcomes[1], StaleTaskError)
    stored = await store.get(older.id)
    assert stored is not None
    assert (stored.seq, stored.task.to_json()) == (2, working.to_json())
    assert [r.payload for r in await store.events_after(older.id, 0)] == [
        older.to_json(),
        working.to_json(),
    ]
    assert [r.seq for r in await store.events_after(newer.id, 0)] == [1]


async def test_of_concurrent_savers_of_one_version_exactly_one_wins(backend: Backend) -> None:
    stores = [await backend.open(), await backend.open()]
    task = make_task()
    await save(stores[0], task)
    contenders = [
        moved(task, TaskState.WORKING, f"2024-05-01T12:00:{i:02d}.000Z") for i in range(8)
    ]

    outcomes = await asyncio.gather(
        *(save(stores[i % 2], c, 2) for i, c in enumerate(contenders)), return_exceptions=True
    )

    winners = [c for c, o in zip(contenders, outcomes, strict=True) if isinstance(o, EventRecord)]
    assert len(winners) == 1
    assert all(isinstance(o, StaleTaskError) for o in outcomes if not isinstance(o, EventRecord))
    stored = await stores[1].get(task.id)
    assert stored is not None
    assert (stored.seq, stored.task.to_json()) == (2, winners[0].to_json())
    log = await stores[0].events_after(task.id, 1)
    assert [r.payload for r in log] == [winners[0].to_json()]


async def test_of_concurrent_creators_of_one_task_exactly_one_wins(backend: Backend) -> None:
    stores = [await backend.open(), await backend.open()]
    task_id = new_id()
    contenders = [make_task(task_id, text=f"creator {i}") for i in range(8)]

    outcomes = await asyncio.gather(
        *(save(stores[i % 2], c, 1) for i, c in enumerate(contenders)), return_exceptions=True
    )

    winners = [c for c, o in zip(contenders, outcomes, strict=True) if isinstance(o, EventRecord)]
    assert len(winners) == 1
    assert sum(isinstance(o, StaleTaskError) for o in outcomes) == 7
    stored = await stores[0].get(task_id)
    assert stored is not None
    assert stored.task.to_json() == winners[0].to_json()


# --- the event log --------------------------------------------------------------------------


async def test_the_event_log_keeps_order_flags_and_payload_bytes(store: TaskStore) -> None:
    task = make_task()
    working = TaskStatusUpdateEvent(
        task_id=task.id,
        context_id=task.context_id,
        status=TaskStatus(state=TaskState.WORKING, timestamp=NOON),
        final=False,
    )
    chunk = TaskArtifactUpdateEvent(
        task_id=task.id,
        context_id=task.context_id,
        artifact=Artifact(artifact_id="a", parts=[TextPart(text="partial")]),
        append=False,
        last_chunk=True,
    )
    done = working.model_copy(
        update={"status": TaskStatus(state=TaskState.COMPLETED, timestamp=NOON), "final": True}
    )
    # The runtime's payload is what subscribers were sent; a replay must send the same bytes.
    spaced = b"""{ "kind" : "status-update", "taskId": "%s", "contextId": "ctx",
        "status": {"state": "completed", "timestamp": "2024-05-01T12:00:00.000Z"},"final":true}"""
    spaced %= task.id.encode()
    records = [
        EventRecord.of(task.id, 1, task, final=False),
        EventRecord.of(task.id, 2, working, final=False),
        EventRecord.of(task.id, 3, chunk, final=False),
        EventRecord(task.id, 4, done, True, spaced),
    ]
    for record in records:
        await store.save(task, record.seq, record)

    logged = await store.events_after(task.id, 0)

    assert [(r.task_id, r.seq, r.final, r.payload) for r in logged] == [
        (r.task_id, r.seq, r.final, r.payload) for r in records
    ]
    assert [r.event for r in logged] == [r.event for r in records]
    assert [r.seq for r in await store.events_after(task.id, 2)] == [3, 4]
    assert await store.events_after(task.id, 4) == []
    assert await store.events_after("no-such-task", 0) == []


async def test_the_log_keeps_at_most_the_configured_number_of_events(backend: Backend) -> None:
    store = await backend.open(Retention(max_events_per_task=3))
    task, other = make_task(), make_task()
    await save_versions(store, task, 6)
    await save_versions(store, other, 2)

    assert [r.seq for r in await store.events_after(task.id, 0)] == [4, 5, 6]
    assert [r.seq for r in await store.events_after(other.id, 0)] == [1, 2]
    stored = await store.get(task.id)
    assert stored is not None and stored.seq == 6


# --- long streams: many artifact chunks ------------------------------------------------------


async def test_a_long_stream_of_chunks_reads_back_as_it_was_applied(store: TaskStore) -> None:
    stream = Stream(store, make_task())
    await stream.start()
    for count in (1, 10, 100, 500):  # past the point where the task's JSON is written again
        await stream.chunks(count)
        await stream.read_back()
    await stream.chunk("answer", "meta", source="model", tokens=3)
    await stream.chunk("second", "x" * 5000)
    await stream.chunks(50, 4096, artifact_id="second")
    await stream.chunk("second", "replaced", append=False)
    await stream.chunk("answer", "more", tokens=4)
    await stream.read_back()
    await stream.status(TaskState.COMPLETED)
    await stream.read_back()

    answer, second = stream.task.artifacts or []
    assert len(answer.parts) == 1 + 10 + 100 + 500 + 2
    assert answer.metadata == {"source": "model", "tokens": 4}
    assert second.parts == [TextPart(text="replaced")]


async def test_chunks_replay_after_any_event_and_keep_versions(store: TaskStore) -> None:
    stream = Stream(store, make_task())
    await stream.start()
    await stream.chunks(300)
    at = stream.seq

    with pytest.raises(StaleTaskError):  # a writer that fell behind changes nothing
        await store.save(
            stream.task, at - 3, EventRecord.of(stream.task.id, at - 3, stream.task, final=False)
        )
    await stream.read_back()
    await stream.chunks(20)  # and the stream goes on after the failed save
    await stream.read_back()

    replayed = await store.events_after(stream.task.id, at - 5)
    assert [r.seq for r in replayed] == list(range(at - 4, stream.seq + 1))
    assert all(isinstance(r.event, TaskArtifactUpdateEvent) for r in replayed)
    assert len(await store.events_after(stream.task.id, 0)) == stream.seq


async def test_a_stream_reads_back_from_another_store_which_can_carry_it_on(
    backend: Backend,
) -> None:
    first = await backend.open()
    stream = Stream(first, make_task())
    await stream.start()
    await stream.chunks(200)

    other = await backend.open()  # SQL: another replica, or the same one after a restart
    await stream.read_back(other)
    stream.store = other  # it adopts the task and streams on
    await stream.chunks(200)
    await stream.read_back(first)
    await stream.status(TaskState.COMPLETED)
    await stream.read_back(first)


async def test_a_bounded_log_keeps_every_chunk_of_the_task(backend: Backend) -> None:
    store = await backend.open(Retention(max_events_per_task=4))
    stream = Stream(store, make_task())
    await stream.start()
    await stream.chunks(100)

    await stream.read_back()
    assert [r.seq for r in await store.events_after(stream.task.id, 0)] == list(
        range(stream.seq - 3, stream.seq + 1)
    )


async def test_events_saved_together_replay_from_any_event(store: TaskStore) -> None:
    stream = Stream(store, make_task())
    saved = await stream.together(stream.task, stream.status_event(TaskState.WORKING))
    for count in (3, 1, 7):
        saved += await stream.together(
            *(stream.chunk_event("answer", f"{n:04d}") for n in range(count))
        )
        await stream.read_back()
    saved += await stream.together(
        stream.chunk_event("answer", "last"), stream.status_event(TaskState.COMPLETED)
    )
    await stream.read_back()

    logged = await store.events_after(stream.task.id, 0)
    assert [(r.seq, r.final, r.payload) for r in logged] == [
        (r.seq, r.final, r.payload) for r in saved
    ]
    assert [r.event for r in logged[1:]] == [r.event for r in saved[1:]]  # [0]: the live task
    for after in range(stream.seq + 1):
        rest = list(range(after + 1, stream.seq + 1))
        assert [r.seq for r in await store.events_after(stream.task.id, after)] == rest
        assert [r.seq for r in await store.events_after(stream.task.id, after, 2)] == rest[:2]


async def test_a_bounded_log_of_events_saved_together_keeps_the_newest(backend: Backend) -> None:
    store = await backend.open(Retention(max_events_per_task=4))
    stream = Stream(store, make_task())
    await stream.start()
    for _ in range(30):
        await stream.chunks_together(5)

    await stream.read_back()
    kept = [r.seq for r in await store.events_after(stream.task.id, 0)]
    assert kept == list(range(kept[0], stream.seq + 1))
    # The bound's newest events, and on SQL stores at most the rest of the row that holds
    # the oldest of them.
    assert 4 <= len(kept) < 4 + 5


async def test_cleanup_of_old_events_keeps_every_chunk_of_a_running_task(backend: Backend) -> None:
    store = await backend.open(Retention(finished_task_ttl=None, event_ttl=timedelta(hours=1)))
    stream = Stream(store, make_task())
    await stream.start()
    await stream.chunks(150)

    await store.cleanup(datetime.now(UTC) + timedelta(hours=2))

    await stream.read_back()
    await stream.chunks(5)
    await stream.read_back()


# --- listing --------------------------------------------------------------------------------


async def test_listing_orders_by_status_time_then_id_newest_first(store: TaskStore) -> None:
    tasks = [
        make_task("b", at="2024-05-01T12:00:00.000Z"),
        make_task("a", at="2024-05-01T12:00:00.000Z"),  # same instant: the id decides
        make_task("c", at="2024-05-01T12:00:00Z"),  # same instant, spelled differently
        make_task("d", at="2024-05-01T13:30:00+02:00"),  # 11:30 UTC: older, despite 13:30
        make_task("e", at="2024-05-01T12:00:00.000001Z"),  # a microsecond newer
        make_task("f", at=None),  # no timestamp: oldest of all
        make_task("B", at="2024-05-01T12:00:00.000Z"),  # "B" < "a" < "b" by code point
    ]
    for task in tasks:
        await save(store, task)

    page = await store.list_tasks(TaskQuery())

    assert ids(page.tasks) == ["e", "c", "b", "a", "B", "d", "f"]
    assert (page.next_page_token, page.total_size) == ("", 7)


async def test_listing_filters_by_context_state_and_update_time(store: TaskStore) -> None:
    rows = [
        ("t1", "ctx-1", TaskState.WORKING, "2024-05-01T10:00:00.000Z"),
        ("t2", "ctx-1", TaskState.COMPLETED, "2024-05-01T11:00:00.000Z"),
        ("t3", "ctx-2", TaskState.WORKING, "2024-05-01T12:00:00.000Z"),
        ("t4", "ctx-2", TaskState.INPUT_REQUIRED, "2024-05-01T13:00:00.000Z"),
        ("t5", "ctx-1", TaskState.WORKING, "2024-05-01T14:00:00.000Z"),
    ]
    for task_id, context_id, state, at in rows:
        await save(store, make_task(task_id, context_id=context_id, state=state, at=at))
    eleven = datetime(2024, 5, 1, 11, tzinfo=UTC)

    async def listed(**filters: object) -> tuple[list[str], int]:
        page = await store.list_tasks(TaskQuery(**filters))  # type: ignore[arg-type]
        return ids(page.tasks), page.total_size

    assert await listed(context_id="ctx-1") == (["t5", "t2", "t1"], 3)
    assert await listed(state=TaskState.WORKING) == (["t5", "t3", "t1"], 3)
    assert await listed(updated_after=eleven) == (["t5", "t4", "t3", "t2"], 4)  # inclusive
    east = timezone(timedelta(hours=5))
    assert await listed(updated_after=eleven.astimezone(east)) == (["t5", "t4", "t3", "t2"], 4)
    assert await listed(context_id="ctx-1", state=TaskState.WORKING, updated_after=eleven) == (
        ["t5"],
        1,
    )
    assert await listed(context_id="ctx-3") == ([], 0)


async def test_pages_walk_the_whole_listing_once(store: TaskStore) -> None:
    for minute in range(7):
        await save(store, make_task(f"t{minute}", at=f"2024-05-01T12:0{minute}:00.000Z"))

    pages = []
    token: str | None = None
    while True:
        page = await store.list_tasks(TaskQuery(page_size=3, page_token=token))
        pages.append(page)
        if not page.next_page_token:
            break
        token = page.next_page_token

    assert [ids(p.tasks) for p in pages] == [["t6", "t5", "t4"], ["t3", "t2", "t1"], ["t0"]]
    assert [p.total_size for p in pages] == [7, 7, 7]
    assert all(p.page_size == 3 for p in pages)


async def test_a_page_token_stays_valid_while_tasks_come_and_change(store: TaskStore) -> None:
    originals = [make_task(f"t{m}", at=f"2024-05-01T12:0{m}:00.000Z") for m in range(6)]
    for task in originals:
        await save(store, task)
    first = await store.list_tasks(TaskQuery(page_size=3))
    token = first.next_page_token

    await save(store, make_task("newest", at="2024-05-02T00:00:00.000Z"))
    again = await store.list_tasks(TaskQuery(page_size=3, page_token=token))
    once_more = await store.list_tasks(TaskQuery(page_size=3, page_token=token))

    assert ids(first.tasks) == ["t5", "t4", "t3"]
    assert ids(again.tasks) == ids(once_more.tasks) == ["t2", "t1", "t0"]
    assert again.next_page_token == ""  # an exact multiple of the page size ends cleanly
    assert again.total_size == 7


async def test_an_empty_listing_is_one_empty_page(store: TaskStore) -> None:
    page = await store.list_tasks(TaskQuery(page_size=1))

    assert (page.tasks, page.next_page_token, page.total_size) == ([], "", 0)


@pytest.mark.parametrize(
    "token",
    ["not a token", base64.urlsafe_b64encode(b"[1, 2, 3]").decode(), "e30", "W10"],
)
async def test_a_page_token_the_server_never_issued_is_invalid_params(
    store: TaskStore, token: str
) -> None:
    with pytest.raises(InvalidParams, match="pageToken"):
        await store.list_tasks(TaskQuery(page_token=token))


# --- push notification configs --------------------------------------------------------------


def hook(url: str, config_id: str | None = None, **extra: Any) -> PushTarget:
    """A webhook in the default payload format."""
    return PushTarget(PushNotificationConfig(id=config_id, url=url, **extra))


async def test_push_configs_are_kept_per_task_in_the_order_first_set(store: TaskStore) -> None:
    first = await store.set_push_config("task-1", hook("https://a/hook"))
    second = await store.set_push_config("task-1", hook("https://b/hook", "mine", token="t"))
    await store.set_push_config("task-2", hook("https://c", "mine"))

    assert first.config.id  # one was assigned
    assert second.config.id == "mine"
    assert await store.get_push_config("task-1", first.config.id) == first
    assert await store.list_push_configs("task-1") == [first, second]
    assert [t.config.url for t in await store.list_push_configs("task-2")] == ["https://c"]
    assert await store.list_push_configs("task-3") == []
    assert await store.get_push_config("task-1", "nope") is None


async def test_setting_a_push_config_again_replaces_it_in_place(store: TaskStore) -> None:
    first = await store.set_push_config("task-1", hook("https://a", "x"))
    await store.set_push_config("task-1", hook("https://b", "y"))
    replaced = await store.set_push_config("task-1", hook("https://a2", "x"))

    assert replaced != first
    assert [(t.config.id, t.config.url) for t in await store.list_push_configs("task-1")] == [
        ("x", "https://a2"),
        ("y", "https://b"),
    ]


async def test_deleting_a_push_config(store: TaskStore) -> None:
    await store.set_push_config("task-1", hook("https://a", "x"))
    await store.set_push_config("task-1", hook("https://b", "y"))

    assert await store.delete_push_config("task-1", "x") is True
    assert await store.delete_push_config("task-1", "x") is False
    assert await store.delete_push_config("task-2", "y") is False
    assert [t.config.id for t in await store.list_push_configs("task-1")] == ["y"]


async def test_a_push_config_keeps_its_payload_format_across_stores(backend: Backend) -> None:
    store = await backend.open()
    default = await store.set_push_config("task-1", hook("https://a", "a"))
    chosen = PushTarget(PushNotificationConfig(url="https://b"), "stream-response/1.0")
    named = await store.set_push_config("task-1", chosen)
    await store.set_push_config("task-1", PushTarget(default.config, "another/format"))
    assert named.config.id

    reopened = await backend.open()  # SQL: a new store, engine and connections on the same data
    kept = await reopened.list_push_configs("task-1")
    assert default.payload_format == TASK_SNAPSHOTS
    assert [(t.config.url, t.payload_format) for t in kept] == [
        ("https://a", "another/format"),  # replaced with its config
        ("https://b", "stream-response/1.0"),
    ]
    assert await reopened.get_push_config("task-1", named.config.id) == named


# --- retention ------------------------------------------------------------------------------


async def test_cleanup_forgets_finished_tasks_after_their_ttl(backend: Backend) -> None:
    store = await backend.open(Retention(finished_task_ttl=timedelta(days=7), event_ttl=None))
    finished = make_task(state=TaskState.COMPLETED)
    running = make_task(state=TaskState.WORKING)
    for task in (finished, running):
        await save_versions(store, task, 2)
        await store.set_push_config(task.id, hook("https://a", "p"))
    now = datetime.now(UTC)

    assert await store.cleanup(now + timedelta(days=6)) == CleanupReport()
    report = await store.cleanup(now + timedelta(days=8))

    assert (report.tasks, report.events) == (1, 2)
    assert await store.get(finished.id) is None
    assert await store.events_after(finished.id, 0) == []
    assert await store.list_push_configs(finished.id) == []
    assert ids((await store.list_tasks(TaskQuery())).tasks) == [running.id]
    assert [r.seq for r in await store.events_after(running.id, 0)] == [1, 2]
    assert len(await store.list_push_configs(running.id)) == 1


async def test_cleanup_forgets_old_events_but_keeps_their_tasks(backend: Backend) -> None:
    store = await backend.open(Retention(finished_task_ttl=None, event_ttl=timedelta(hours=1)))
    finished = make_task(state=TaskState.COMPLETED)
    running = make_task(state=TaskState.WORKING)
    await save_versions(store, finished, 2)
    await save_versions(store, running, 3)

    report = await store.cleanup(datetime.now(UTC) + timedelta(hours=2))

    assert (report.tasks, report.events) == (0, 5)
    assert await store.events_after(running.id, 0) == []
    for task in (finished, running):
        stored = await store.get(task.id)
        assert stored is not None and stored.task.to_json() == task.to_json()


async def test_cleanup_with_the_default_retention_keeps_fresh_data(store: TaskStore) -> None:
    task = make_task(state=TaskState.COMPLETED)
    await save(store, task)

    assert await store.cleanup() == CleanupReport()
    assert await store.get(task.id) is not None


# --- runners ----------------------------------------------------------------------------------


async def test_running_tasks_without_a_live_runner_are_orphans(store: TaskStore) -> None:
    now = datetime.now(UTC)
    unclaimed = make_task(state=TaskState.SUBMITTED)
    alive = make_task(state=TaskState.WORKING)
    dead = make_task(state=TaskState.WORKING)
    waiting = make_task(state=TaskState.INPUT_REQUIRED)
    finished = make_task(state=TaskState.COMPLETED)
    for task in (unclaimed, alive, dead, waiting, finished):
        await save(store, task)
    await store.heartbeat("replica-alive", now + timedelta(seconds=15))
    await store.heartbeat("replica-dead", now - timedelta(seconds=1))
    await store.record_runner(alive.id, "replica-alive")
    await store.record_runner(dead.id, "replica-dead")
    await store.record_runner(waiting.id, "replica-dead")
    await store.record_runner(finished.id, "replica-dead")

    orphans = await store.orphans(now)

    found = sorted((o.stored.task.id, o.runner, o.stored.seq) for o in orphans)
    assert found == sorted([(unclaimed.id, None, 1), (dead.id, "replica-dead", 1)])
    later = await store.orphans(now + timedelta(seconds=20))  # the live one's heartbeat expired
    assert alive.id in {o.stored.task.id for o in later}


async def test_an_orphan_is_taken_over_once(store: TaskStore) -> None:
    now = datetime.now(UTC)
    claimed, unclaimed = make_task(state=TaskState.WORKING), make_task(state=TaskState.WORKING)
    await save(store, claimed)
    await save(store, unclaimed)
    await store.record_runner(claimed.id, "gone")
    await store.heartbeat("rescuer", now + timedelta(seconds=15))

    taken = await store.take_over(claimed.id, "gone", "rescuer")
    assert await store.take_over(claimed.id, "gone", "another") is None
    taken_unclaimed = await store.take_over(unclaimed.id, None, "rescuer")
    assert await store.take_over(unclaimed.id, None, "another") is None
    assert await store.orphans(now) == []
    # Each taken over under a new epoch: the task as it was, one claim later.
    assert taken is not None and (taken.task, taken.seq, taken.epoch) == (claimed, 1, 1)
    assert taken_unclaimed is not None and (taken_unclaimed.seq, taken_unclaimed.epoch) == (1, 1)


async def test_a_finished_task_is_not_taken_over(store: TaskStore) -> None:
    task = make_task(state=TaskState.WORKING)
    await save(store, task)
    await store.record_runner(task.id, "gone")
    await save(store, moved(task, TaskState.COMPLETED), 2)

    assert await store.take_over(task.id, "gone", "rescuer") is None
    assert await store.claim(task.id, "rescuer") is None


# --- owners ----------------------------------------------------------------------------------


async def save_owned(store: TaskStore, task: Task, owner: str) -> None:
    await store.save(task, 1, EventRecord.of(task.id, 1, task, final=False), owner=owner)


async def test_a_task_is_read_only_as_its_owners(store: TaskStore) -> None:
    task = make_task()
    await save_owned(store, task, "alice")
    await store.save(moved(task, TaskState.WORKING), 2, owner="bob")  # later saves keep it

    mine = await store.get(task.id, "alice")
    assert mine is not None and (mine.seq, mine.owner) == (2, "alice")
    assert await store.get(task.id, "bob") is None
    assert await store.get(task.id, ANONYMOUS_OWNER) is None
    unfiltered = await store.get(task.id)
    assert unfiltered is not None and unfiltered.owner == "alice"


async def test_tasks_saved_without_an_owner_are_the_anonymous_owners(store: TaskStore) -> None:
    task = make_task()
    await save(store, task)

    stored = await store.get(task.id, ANONYMOUS_OWNER)
    assert stored is not None and stored.owner == ANONYMOUS_OWNER
    assert await store.get(task.id, "alice") is None


async def test_a_listing_for_an_owner_counts_and_pages_only_its_tasks(store: TaskStore) -> None:
    minutes = [f"2024-05-01T12:{minute:02d}:00.000Z" for minute in range(10)]
    alices = [make_task(f"a{n}", at=minutes[2 * n]) for n in range(5)]
    bobs = [make_task(f"b{n}", at=minutes[2 * n + 1]) for n in range(5)]
    for task in alices:
        await save_owned(store, task, "alice")
    for task in bobs:
        await save_owned(store, task, "bob")

    seen: list[Task] = []
    token: str | None = None
    while True:
        page = await store.list_tasks(TaskQuery(owner="alice", page_size=2, page_token=token))
        assert page.total_size == 5
        seen += page.tasks
        token = page.next_page_token
        if not token:
            break
    everyone = await store.list_tasks(TaskQuery(page_size=100))
    nobodys = await store.list_tasks(TaskQuery(owner=ANONYMOUS_OWNER))
    of_context = await store.list_tasks(TaskQuery(owner="bob", context_id="ctx", page_size=100))

    assert ids(seen) == ["a4", "a3", "a2", "a1", "a0"]
    assert everyone.total_size == 10
    assert (nobodys.tasks, nobodys.total_size, nobodys.next_page_token) == ([], 0, "")
    assert ids(of_context.tasks) == ["b4", "b3", "b2", "b1", "b0"]


async def test_a_context_belongs_to_the_owner_of_its_first_task(store: TaskStore) -> None:
    await save_owned(store, make_task(context_id="alices"), "alice")
    await save(store, make_task(context_id="open"))

    assert await store.context_owner("alices") == "alice"
    assert await store.context_owner("open") == ANONYMOUS_OWNER
    assert await store.context_owner("unknown") is None


async def test_push_configs_are_read_only_as_their_tasks_owners(store: TaskStore) -> None:
    task = make_task()
    await save_owned(store, task, "alice")
    target = await store.set_push_config(
        task.id, PushTarget(PushNotificationConfig(url="https://hook"))
    )
    assert target.config.id is not None

    assert await store.list_push_configs(task.id, "alice") == [target]
    assert await store.get_push_config(task.id, target.config.id, "alice") == target
    assert await store.list_push_configs(task.id, "bob") == []
    assert await store.get_push_config(task.id, target.config.id, "bob") is None
    assert await store.delete_push_config(task.id, target.config.id, "bob") is False
    assert await store.list_push_configs(task.id) == [target]
    assert await store.delete_push_config(task.id, target.config.id, "alice") is True
    assert await store.list_push_configs(task.id) == []


async def test_the_owner_is_stored_with_the_task_for_every_store_to_see(backend: Backend) -> None:
    task = make_task()
    first = await backend.open()
    await save_owned(first, task, "alice")
    second = await backend.open()  # another replica on the same database

    assert await second.get(task.id, "bob") is None
    found = await second.get(task.id, "alice")
    assert found is not None and found.owner == "alice"
    listed = await second.list_tasks(TaskQuery(owner="alice"))
    assert ids(listed.tasks) == [task.id]


async def test_a_context_is_forgotten_with_its_last_task(backend: Backend) -> None:
    store = await backend.open(Retention(finished_task_ttl=timedelta(days=7), event_ttl=None))
    await save_owned(store, make_task(context_id="done", state=TaskState.COMPLETED), "alice")
    await save_owned(store, make_task(context_id="going", state=TaskState.WORKING), "alice")

    await store.cleanup(datetime.now(UTC) + timedelta(days=8))

    assert await store.context_owner("done") is None
    assert await store.context_owner("going") == "alice"
