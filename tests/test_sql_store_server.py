"""`accord serve` on SQLite keeps every task through restarts and crashes; store setup, cleanup."""

from __future__ import annotations

import asyncio
import itertools
import signal
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import accord
from accord.cli.main import app as cli
from accord.client import SyncClient
from accord.core.records import EventRecord
from accord.errors import RateLimited
from accord.samples import echo
from accord.server import create_app
from accord.store import CleanupReport, InMemoryTaskStore, open_store
from accord.store.retention import DEFAULT_MAX_EVENTS_PER_TASK
from accord.store.sql.migrations import head_version
from accord.types import Task, TaskArtifactUpdateEvent, TaskState
from agents_for_tests import SAFETY_TIMEOUT, AsksThenCompletes, Switchboard
from served_process import accord_serve, free_port

AGENT = accord.Agent(
    Switchboard({"ask": AsksThenCompletes()}, default=echo.agent.executor),
    name="Restartable",
    description="Echoes; a first message starting with 'ask' asks for a name first.",
)
"""Served as `accord serve test_sql_store_server:AGENT`."""


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def sent_task(client: SyncClient, text: str, task_id: str | None = None) -> Task:
    result = client.send(text, task_id=task_id)
    assert isinstance(result, Task)
    return result


def snapshot(url: str, task_ids: list[str]) -> dict[str, bytes]:
    """Each task as tasks/get returns it now, as wire JSON."""
    with SyncClient(url) as client:
        return {task_id: client.get_task(task_id).to_json() for task_id in task_ids}


@pytest.mark.processes
def test_every_task_survives_a_clean_restart_and_a_crash(tmp_path: Path) -> None:
    store = ("--store", f"sqlite:///{tmp_path}/data/accord.db")
    target = f"{__name__}:AGENT"

    with accord_serve(target, *store) as served:
        with SyncClient(served.url) as client:
            done = sent_task(client, "hello")
            asking = sent_task(client, "ask me something")
        before = snapshot(served.url, [done.id, asking.id])
        served.stop(signal.SIGTERM)
        assert "Application shutdown complete" in "".join(served.stderr)  # a clean stop

    with accord_serve(target, *store) as served:
        assert snapshot(served.url, [done.id, asking.id]) == before
        with SyncClient(served.url) as client:
            answered = sent_task(client, "Ada", task_id=asking.id)  # resumes after the restart
            later = sent_task(client, "after the restart")
        before_crash = snapshot(served.url, [done.id, asking.id, later.id])
        served.stop(signal.SIGKILL)

    with accord_serve(target, *store) as served:
        assert snapshot(served.url, [done.id, asking.id, later.id]) == before_crash

    assert asking.status.state is TaskState.INPUT_REQUIRED
    assert answered.status.state is TaskState.COMPLETED
    assert answered.artifacts and answered.artifacts[0].text == "Hello, Ada!"


@accord.agent(name="Endless", description="Streams numbered chunks until it is stopped.")
async def endless(context: accord.RequestContext) -> AsyncIterator[str]:
    for n in itertools.count():
        yield chunk_text(n)
        if n % 64 == 63:
            await asyncio.sleep(0.001)


def chunk_text(n: int) -> str:
    return f"{n:08d} "


async def follow_chunks(url: str, count: int) -> tuple[str, list[str], int]:
    """Start a stream of `endless`; its task id, the first `count` chunks, their last event id.

    A reader the agent outruns is ended (StreamOverrun) and resumes from the log, as any
    client would, with the last event id it saw. One so far behind that the log's bound
    dropped the events it missed gets the task instead: its chunks so far stand for them."""
    async with accord.Client(url) as client:
        task_id, received, last_seen = "", [], 0
        stream = client.stream("go")
        while True:
            try:
                async with stream:
                    async for event in stream:
                        if isinstance(event, Task):
                            task_id = event.id
                            received = chunks_of(event)
                        if isinstance(event, TaskArtifactUpdateEvent):
                            received += [part.text for part in event.artifact.parts]  # type: ignore[union-attr]
                        assert stream.last_event_id is not None
                        last_seen = stream.last_event_id
                        if len(received) >= count:
                            return task_id, received, last_seen
                raise AssertionError("the stream ended early")
            except RateLimited:
                stream = client.resubscribe(task_id, last_event_id=last_seen)


@pytest.mark.processes
def test_a_crash_mid_stream_loses_no_chunk_a_client_received(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/accord.db"
    target = f"{__name__}:endless"
    with accord_serve(target, "--store", url) as served:
        task_id, received, last_event_id = asyncio.run(follow_chunks(served.url, 3000))
        served.stop(signal.SIGKILL)  # the agent was still streaming, saves in flight

    with accord_serve(target, "--store", url) as served, SyncClient(served.url) as client:
        task = client.get_task(task_id)
    stored = chunks_of(task)
    logged = asyncio.run(events_after(url, task_id, last_event_id - 100))

    assert stored[: len(received)] == received
    assert stored == [chunk_text(n) for n in range(len(stored))], "no gap, no repeat"
    seqs = [record.seq for record in logged]
    assert seqs == list(range(seqs[0], seqs[-1] + 1)), "the log has no gap"
    # It reaches back to the events the client saw last, unless the agent ran so far ahead of
    # a slow client that the log's bound dropped them.
    bound = seqs[-1] - DEFAULT_MAX_EVENTS_PER_TASK + 1
    reach = f"log {seqs[0]}..{seqs[-1]}, client saw up to {last_event_id}"
    assert last_event_id - 99 <= seqs[0] <= max(last_event_id - 99, bound), reach


def chunks_of(task: Task) -> list[str]:
    """The chunks of the task's one artifact (none before the first)."""
    parts = task.artifacts[0].parts if task.artifacts else []
    return [part.text for part in parts]  # type: ignore[union-attr]


async def events_after(url: str, task_id: str, seq: int) -> list[EventRecord]:
    store = open_store(url)
    try:
        return await store.events_after(task_id, seq)
    finally:
        await store.close()


def test_db_upgrade_creates_the_schema_once(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/accord.db"

    first = invoke("db", "upgrade", "--store", store)
    second = invoke("db", "upgrade", env={"ACCORD_STORE": store})

    assert (first.exit_code, second.exit_code) == (0, 0)
    assert first.stdout == f"created the schema of {store} (version {head_version()})\n"
    assert second.stdout == f"{store} is up to date (version {head_version()})\n"


def test_serve_reports_a_store_it_cannot_open_in_one_line() -> None:
    unreachable = f"postgresql://nobody:secret@127.0.0.1:{free_port()}/accord"

    result = invoke("serve", "accord.samples.echo:agent", env={"ACCORD_STORE": unreachable})

    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot open the task store postgresql://nobody:***@")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "secret" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--store", "mysql://u@db/accord"), "unsupported database URL"),
        (("--store", "sqlite://"), "in-memory SQLite"),
        (("--store", "memory://"), "the memory store is named just 'memory'"),
        (("--store", "memory://tasks"), "the memory store is named just 'memory'"),
        (("--store", "postgresql://db:port/accord"), "is not a database URL"),
        (("--store", "redis://127.0.0.1:6379/0"), "unsupported database URL"),
        (("--store", "tasks.db"), "is not a database URL"),
        (("--task-ttl", "soon"), "--task-ttl must be a duration"),
        (("--cleanup-interval", "-5m"), "--cleanup-interval must be a duration"),
    ],
)
def test_serve_refuses_bad_store_options(args: tuple[str, ...], message: str) -> None:
    result = invoke("serve", "accord.samples.echo:agent", *args)

    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize("url", ["memory://", "postgresql://db:port/accord", "ftp://x/y"])
def test_db_upgrade_says_in_one_line_what_is_wrong_with_a_store_url(url: str) -> None:
    result = invoke("db", "upgrade", "--store", url)

    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: --store {url}: ")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# --- the app's lifespan: open, clean up, close ------------------------------------------------


class WatchedStore(InMemoryTaskStore):
    """A memory store that reports when the app opens, cleans and closes it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.cleaned = asyncio.Event()

    async def open(self) -> None:
        self.calls.append("open")

    async def cleanup(self, now: datetime | None = None) -> CleanupReport:
        self.calls.append("cleanup")
        self.cleaned.set()
        return await super().cleanup(now)

    async def close(self) -> None:
        self.calls.append("close")


async def test_the_app_opens_its_store_cleans_it_up_and_closes_it() -> None:
    store = WatchedStore()
    app = create_app(echo.agent, store=store, cleanup_interval=3600)

    async with app.router.lifespan_context(app):
        await asyncio.wait_for(store.cleaned.wait(), SAFETY_TIMEOUT)

    assert store.calls == ["open", "cleanup", "close"]


async def test_cleanup_can_be_turned_off() -> None:
    store = WatchedStore()
    app = create_app(echo.agent, store=store, cleanup_interval=None)

    async with app.router.lifespan_context(app):
        running = {task.get_name() for task in asyncio.all_tasks()}

    assert "accord-store-cleanup" not in running
    assert store.calls == ["open", "close"]
