"""A replica that stalls (SIGSTOP) and wakes (SIGCONT) never writes to a task it lost."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import pytest_asyncio

from rpc import Json, RpcClient, SseEvent, connect, text_of
from served_process import ServedProcess, accord_servers
from services import redis_bus_fixture  # noqa: F401 - a fixture
from stores import fresh_pg_schema, pg_schema_url
from ticker_streams import artifact_ticks, counted, full_log, ticks

pytestmark = pytest.mark.processes

TICKER = "accord.samples.ticker:agent"
RUNNER_TTL = 6.0
OPTIONS = ("--runner-ttl", f"{RUNNER_TTL:g}s", "--handover-timeout", "1s")
"""B cancels a task of a silent A after 1 s; A's tasks are B's 6 s after A's last heartbeat."""
WAKE_UP = 3.0
"""How long A runs after SIGCONT before the tasks are looked at: 30 ticks' time."""
_BUS = " accord.bus: "
"""What the bus's log lines say after their time and level."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pg_schema() -> AsyncIterator[str]:
    async with fresh_pg_schema() as schema:
        yield schema


@pytest.fixture(params=["postgresql", "sqlite"])
def store_url(request: pytest.FixtureRequest, pg_schema: str, tmp_path: Path) -> str:
    """PostgreSQL, or one SQLite file both replicas share."""
    if request.param == "postgresql":
        return pg_schema_url(pg_schema)
    return f"sqlite:///{tmp_path}/shared.db"


@contextmanager
def stopped(served: ServedProcess) -> Iterator[None]:
    """SIGSTOP `served` for the block, SIGCONT after it (also when the block fails)."""
    os.kill(served.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(served.process.pid, signal.SIGCONT)


async def until(rpc: RpcClient, task_id: str, holds: Callable[[Json], bool], within: float) -> Json:
    """The task once `holds(task)`, asked every 100 ms for at most `within` seconds."""
    for _ in range(int(within * 10)):
        task = await rpc.get_task(task_id)
        if holds(task):
            return task
        await asyncio.sleep(0.1)
    raise AssertionError(f"task {task_id} is still {task['status']} after {within} s")


def in_state(state: str) -> Callable[[Json], bool]:
    return lambda task: bool(task["status"]["state"] == state)


def ticked(task: Json) -> bool:
    """Whether the task shows a few ticks."""
    return len(shown_ticks(task)) >= 3


def shown_ticks(task: Json) -> list[str]:
    return artifact_ticks(task) if task.get("artifacts") else []


def finals(events: list[SseEvent]) -> list[Json]:
    return [event.result for event in events if event.result.get("final")]


async def check_replay(rpc: RpcClient, task: Json) -> None:
    """The task's log ends with its one final event, and replaying it gives the task."""
    logged = await full_log(rpc, task["id"])
    assert [event.id for event in logged] == list(range(1, len(logged) + 1))
    assert finals(logged) == [logged[-1].result], [e.result for e in logged]
    assert logged[-1].result["status"] == task["status"]
    assert ticks(logged) == shown_ticks(task)


@pytest.mark.parametrize("pause", ["past the runner ttl", "within the runner ttl"])
async def test_a_replica_that_wakes_up_leaves_the_tasks_it_lost_as_they_ended(
    store_url: str, redis_bus: str, pause: str
) -> None:
    command = (TICKER, "--store", store_url, "--bus", redis_bus, *OPTIONS)
    with accord_servers(command, command) as (a, b):
        async with connect(a.url) as on_a, connect(b.url) as on_b:
            first = await on_a.send("100", configuration={"blocking": False})
            second = await on_a.send("100", configuration={"blocking": False})
            await until(on_b, second["id"], ticked, within=10)
            with stopped(a):
                canceled = await on_b.result("tasks/cancel", {"id": second["id"]})
                if pause == "past the runner ttl":
                    failed = await until(on_b, first["id"], in_state("failed"), RUNNER_TTL * 3)
            await asyncio.sleep(WAKE_UP)
            second_after = await on_b.get_task(second["id"])
            first_after = await on_b.get_task(first["id"])
            for rpc in (on_a, on_b):
                assert await rpc.get_task(second["id"]) == second_after
            await check_replay(on_b, second_after)
            if pause == "past the runner ttl":
                assert first_after == failed
                assert "server running this task stopped" in text_of(failed["status"]["message"])
            else:  # A kept the first task: it counts to the end
                first_after = await until(on_b, first["id"], in_state("completed"), within=15)
                assert artifact_ticks(first_after) == counted(100)
            await check_replay(on_b, first_after)

    assert canceled["status"]["state"] == "canceled"
    assert second_after == canceled
    said = f"--- A said:\n{a.output}\n--- B said:\n{b.output}"
    assert "could not be saved" not in a.output, said
    assert "The agent failed" not in a.output + b.output, said
    assert "ERROR accord.runtime" not in a.output + b.output, said
    lost = [second["id"]] + ([first["id"]] if pause == "past the runner ttl" else [])
    for task_id in lost:
        # A publish in flight when A was stopped may time out once it wakes (on a loaded
        # machine): the bus says so, naming the task's stream. The runtime says one thing.
        lines = [line for line in a.output.splitlines() if task_id in line and _BUS not in line]
        assert len(lines) == 1 and "WARNING" in lines[0], said
