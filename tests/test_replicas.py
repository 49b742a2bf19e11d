"""Real `accord serve` processes: replay after a dropped stream, replicas, crashes, SIGTERM."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest

from accord import Client
from accord.client import ApiKey
from accord.errors import TaskNotFound
from accord.types import (
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from rpc import (
    JSON_HEADERS,
    SseEvent,
    connect,
    request,
    send_params,
    text_of,
)
from served_process import ServedProcess, accord_serve, accord_servers
from services import redis_bus_fixture  # noqa: F401 - a fixture
from stores import fresh_pg_schema, pg_schema_url
from ticker_streams import (
    FAST,
    RESTARTABLE_TICKER,
    TICKER,
    artifact_ticks,
    counted,
    final_status,
    full_log,
    is_tick,
    numbered,
    resume,
    through,
    ticks,
)

pytestmark = pytest.mark.processes


@pytest.fixture
async def pg_store() -> AsyncIterator[str]:
    """A PostgreSQL store URL on a schema of this test's own: a store keeps one agent's tasks,
    and the tests here serve several agents."""
    async with fresh_pg_schema() as schema:
        yield pg_schema_url(schema)


def replicas(
    target: str, store: str, bus: str, *options: str
) -> AbstractContextManager[list[ServedProcess]]:
    """Two servers of `target` sharing `store` and `bus` (`options` override FAST's)."""
    return accord_servers(*[(target, "--store", store, "--bus", bus, *FAST, *options)] * 2)


def sqlite_store(tmp_path: Path) -> tuple[str, str]:
    return ("--store", f"sqlite:///{tmp_path}/accord.db")


# --- replay after a dropped connection, one SQLite server ------------------------------------


@pytest.fixture(scope="module")
def ticker_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with accord_serve(TICKER, *sqlite_store(tmp_path_factory.mktemp("ticker"))) as served:
        yield served.url


async def test_a_dropped_stream_resumes_after_its_last_event_id(ticker_url: str) -> None:
    async with connect(ticker_url) as rpc:
        async with rpc.stream("message/stream", send_params("20")) as stream:
            before = [await stream.next() for _ in range(5)]  # the task, working, 3 ticks
        task_id = before[0].result["id"]
        async with resume(rpc, task_id, after=before[-1].id) as stream:
            after = await stream.rest()
        logged = await full_log(rpc, task_id)

    assert ticks(before + after) == counted(20)
    assert numbered(before + after) == numbered(logged)  # nothing missed, nothing twice
    assert [event.id for event in logged] == list(range(1, len(logged) + 1))
    assert final_status(after)["state"] == "completed"


async def test_the_client_resumes_a_dropped_stream(ticker_url: str) -> None:
    seen: list[tuple[int | None, StreamEvent]] = []
    async with Client(ticker_url) as client:
        async with client.stream("20") as stream:
            async for event in stream:
                seen.append((stream.last_event_id, event))
                if len(seen) == 5:
                    break
        task = seen[0][1]
        assert isinstance(task, Task)
        async with client.resubscribe(task.id, last_event_id=stream.last_event_id) as resumed:
            seen.extend([(resumed.last_event_id, event) async for event in resumed])

    events = [event for _, event in seen]
    assert [event_id for event_id, _ in seen] == list(range(1, len(seen) + 1))
    chunks = [e.artifact.text for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert chunks == counted(20)
    assert isinstance(events[-1], TaskStatusUpdateEvent)
    assert events[-1].final and events[-1].status.state is TaskState.COMPLETED


async def test_resuming_after_the_final_event_says_there_is_nothing_more(ticker_url: str) -> None:
    async with connect(ticker_url) as rpc:
        async with rpc.stream("message/stream", send_params("2")) as stream:
            events = await stream.rest()
        task_id = events[0].result["id"]
        async with resume(rpc, task_id, after=events[-2].id) as stream:
            missed = await stream.rest()
        headers = {**JSON_HEADERS, "Last-Event-ID": str(events[-1].id)}
        response = await rpc.post(request("tasks/resubscribe", {"id": task_id}), headers=headers)

    assert numbered(missed) == numbered(events[-1:])
    error = response.json()["error"]
    assert error["code"] == -32004  # UnsupportedOperation, not an internal error
    assert error["message"].endswith("is completed; there is nothing to follow")


# --- two replicas on PostgreSQL + Redis ------------------------------------------------------


async def test_a_stream_started_on_one_replica_continues_on_another(
    pg_store: str, redis_bus: str
) -> None:
    with replicas(TICKER, pg_store, redis_bus) as (a, b):
        async with connect(a.url) as on_a, connect(b.url) as on_b:
            async with on_a.stream("message/stream", send_params("30")) as from_a:
                first = [await from_a.next() for _ in range(4)]  # the task, working, 2 ticks
                task_id = first[0].result["id"]
                async with resume(on_b, task_id, after=first[-1].id) as from_b:
                    on_b_first = await from_b.next()
                    seen_on_b = await on_b.get_task(task_id)
                    rest_a, rest_b = await asyncio.gather(from_a.rest(), from_b.rest())
            logged = await full_log(on_b, task_id)

    assert numbered([on_b_first, *rest_b]) == numbered(rest_a)  # same events, same numbers
    assert numbered(first + rest_a) == numbered(logged)
    assert final_status(rest_b)["state"] == "completed"
    # B read the task from the store while A ran it: at least as far as B's stream had come.
    assert seen_on_b["status"]["state"] == "working"
    shown = artifact_ticks(seen_on_b)
    assert shown == counted(len(shown)) and len(shown) >= len(ticks([*first, on_b_first]))


async def test_cancel_sent_to_one_replica_stops_the_agent_on_another(
    pg_store: str, redis_bus: str
) -> None:
    with replicas(TICKER, pg_store, redis_bus) as (a, b):
        async with connect(a.url) as on_a, connect(b.url) as on_b:
            async with on_a.stream("message/stream", send_params("1000")) as from_a:
                first = await through(from_a, is_tick)
                task_id = first[0].result["id"]
                canceled = await on_b.result("tasks/cancel", {"id": task_id})
                rest = await from_a.rest()
            on_a_task = await on_a.get_task(task_id)
            on_b_task = await on_b.get_task(task_id)
            logged = await full_log(on_b, task_id)

    assert canceled["status"]["state"] == "canceled"
    assert final_status(rest)["state"] == "canceled"
    assert numbered(first + rest) == numbered(logged)  # nothing after the cancel
    assert on_a_task["status"]["state"] == on_b_task["status"]["state"] == "canceled"
    assert artifact_ticks(on_a_task) == artifact_ticks(on_b_task) == ticks(first + rest)
    assert "no replica canceled" not in b.output  # A's runtime canceled it, not B on its own
    assert "Traceback" not in a.output + b.output


async def test_a_stream_ended_by_sigterm_resumes_on_another_replica(
    pg_store: str, redis_bus: str
) -> None:
    with replicas(TICKER, pg_store, redis_bus, "--graceful-timeout", "1s") as (a, b):
        async with connect(a.url) as on_a, connect(b.url) as on_b:
            async with on_a.stream("message/stream", send_params("1000")) as from_a:
                seen = await through(from_a, is_tick)
                _, rest = await asyncio.gather(
                    asyncio.to_thread(a.stop, signal.SIGTERM), from_a.rest()
                )
            seen += rest
            task_id = seen[0].result["id"]
            try:
                async with resume(on_b, task_id, after=seen[-1].id) as from_b:
                    resumed = await from_b.rest()
            except httpx.TimeoutException:
                pytest.fail(f"B never ended the task A gave up on SIGTERM\n{said(a, b)}")
            logged = await full_log(on_b, task_id)

    servers = said(a, b)
    assert not any(event.result.get("final") for event in seen), (
        f"A's stream ended with a final event: it was not cut short by the SIGTERM\n{servers}"
    )
    assert numbered(seen + resumed) == numbered(logged), (
        f"B did not resume the stream where A ended it, with each logged event once\n{servers}"
    )
    last = resumed[-1].result if resumed else None
    assert last is not None and last["kind"] == "status-update" and last["final"], (
        f"B's stream did not end with the task's final status: {last}\n{servers}"
    )
    assert last["status"]["state"] == "failed", servers  # A handed the task over; B ended it
    assert "server running this task stopped" in text_of(last["status"]["message"]), servers


def said(*servers: ServedProcess) -> str:
    """What `servers` wrote to stderr, for a failed assertion to show."""
    return "\n".join(f"--- {served.url} said:\n{served.output}" for served in servers)


# --- a replica dies --------------------------------------------------------------------------


async def follow_through_a_crash(a: ServedProcess, b: ServedProcess, count: int) -> list[SseEvent]:
    """Start a ticker of `count` on A, follow it on B, kill A once B saw a tick; B's events."""
    async with connect(a.url) as on_a, connect(b.url) as on_b:
        task = await on_a.send(str(count), configuration={"blocking": False})
        async with resume(on_b, task["id"]) as follower:
            events = await through(follower, is_tick)
            a.kill()
            events += await follower.rest()
    return events


async def test_a_dead_replicas_task_fails_on_another(pg_store: str, redis_bus: str) -> None:
    with replicas(TICKER, pg_store, redis_bus) as (a, b):
        events = await follow_through_a_crash(a, b, 1000)
        async with connect(b.url) as on_b:
            task = await on_b.get_task(events[0].result["id"])

    status = final_status(events)
    assert status["state"] == "failed"
    assert "server running this task stopped" in text_of(status["message"])
    assert task["status"] == status


async def test_a_dead_replicas_restartable_task_runs_again_on_another(
    pg_store: str, redis_bus: str
) -> None:
    with replicas(RESTARTABLE_TICKER, pg_store, redis_bus) as (a, b):
        events = await follow_through_a_crash(a, b, 10)
        async with connect(b.url) as on_b:
            task = await on_b.get_task(events[0].result["id"])

    assert final_status(events)["state"] == "completed"
    notes = [
        text_of(event.result["status"]["message"])
        for event in events
        if event.result["kind"] == "status-update" and event.result["status"].get("message")
    ]
    assert any("Resumed" in note for note in notes)
    assert task["status"]["state"] == "completed"
    assert artifact_ticks(task) == counted(10)  # the second run counted all the way


# --- one SQLite server: a crash and a restart, SIGTERM ----------------------------------------


async def test_a_killed_server_keeps_its_tasks_and_fails_the_interrupted_one(
    tmp_path: Path,
) -> None:
    store = sqlite_store(tmp_path)
    with accord_serve(TICKER, *store, *FAST) as server:
        async with connect(server.url) as rpc:
            done = await rpc.send("2")
            async with rpc.stream("message/stream", send_params("1000")) as stream:
                seen = await through(stream, is_tick)
                server.kill()
    interrupted_id = seen[0].result["id"]

    with accord_serve(TICKER, *store, *FAST) as restarted:
        async with connect(restarted.url) as rpc:
            assert await rpc.get_task(done["id"]) == done
            # From the last event seen: whether or not the task was taken over yet, what
            # followed it (the ticks logged before the crash, then the failure) comes next.
            async with resume(rpc, interrupted_id, after=seen[-1].id) as follower:
                events = await follower.rest()
            interrupted = await rpc.get_task(interrupted_id)

    assert done["status"]["state"] == "completed" and artifact_ticks(done) == counted(2)
    assert [event.id for event in seen + events] == list(range(1, len(seen + events) + 1))
    status = final_status(events)
    assert status["state"] == "failed"
    assert "server running this task stopped" in text_of(status["message"])
    assert interrupted["status"] == status
    assert artifact_ticks(interrupted) == ticks(seen + events)


async def test_sigterm_lets_streams_finish_ends_the_rest_cleanly_and_keeps_the_tasks(
    tmp_path: Path,
) -> None:
    store = sqlite_store(tmp_path)
    with accord_serve(TICKER, *store, *FAST, "--graceful-timeout", "3s") as server:
        async with (
            connect(server.url) as rpc,
            rpc.stream("message/stream", send_params("5")) as short,
            rpc.stream("message/stream", send_params("1000")) as long,
        ):
            short_seen = await through(short, is_tick)
            long_seen = await through(long, is_tick)
            exit_code, short_rest, long_rest = await asyncio.gather(
                asyncio.to_thread(server.stop, signal.SIGTERM), short.rest(), long.rest()
            )
    long_seen += long_rest

    assert exit_code in (0, -signal.SIGTERM)  # uvicorn exits by the signal it was sent
    assert "Application shutdown complete" in server.output
    assert "Traceback" not in server.output
    assert ticks(short_seen + short_rest) == counted(5)  # within the grace period: finished
    assert final_status(short_rest)["state"] == "completed"
    assert not any(event.result.get("final") for event in long_seen)  # cut short, cleanly
    with accord_serve(TICKER, *store, *FAST) as restarted:
        async with connect(restarted.url) as rpc:
            finished = await rpc.get_task(short_seen[0].result["id"])
            unfinished = await rpc.get_task(long_seen[0].result["id"])
    assert finished["status"]["state"] == "completed"
    assert artifact_ticks(finished) == counted(5)
    shown = artifact_ticks(unfinished)
    assert shown == counted(len(shown)) and len(shown) >= len(ticks(long_seen))


# --- tenant isolation across replicas ---------------------------------------------------------


def caller(url: str, name: str) -> Client:
    return Client(url, credentials=[ApiKey(f"key-of-{name}")], version="1.0")


async def test_a_task_made_on_one_replica_is_only_its_owners_on_another(
    pg_store: str, redis_bus: str
) -> None:
    with replicas("keyed_agent:agent", pg_store, redis_bus) as (a, b):
        async with caller(a.url, "alice") as alice_on_a:
            asked = await alice_on_a.send("ask me")
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED

        async with caller(b.url, "bob") as bob_on_b:
            listed = await bob_on_b.list_tasks()
            with pytest.raises(TaskNotFound):
                await bob_on_b.get_task(asked.id)
            with pytest.raises(TaskNotFound):
                await bob_on_b.cancel_task(asked.id)
            with pytest.raises(TaskNotFound):
                await bob_on_b.send("an answer", task_id=asked.id)
            with pytest.raises(TaskNotFound):
                async with bob_on_b.resubscribe(asked.id) as stream:
                    await anext(aiter(stream))
        async with caller(b.url, "alice") as alice_on_b:
            found = await alice_on_b.get_task(asked.id)
            hers = await alice_on_b.list_tasks()
            canceled = await alice_on_b.cancel_task(asked.id)

    assert (listed.tasks, listed.total_size) == ([], 0)
    assert found.status.state is TaskState.INPUT_REQUIRED
    assert [task.id for task in hers.tasks] == [asked.id]
    assert canceled.status.state is TaskState.CANCELED
