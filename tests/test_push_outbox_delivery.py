"""Durable push delivery through the outbox, with real receivers on loopback: retries under
one delivery id, order per webhook, parking and `accord push failures`, slow webhooks."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from accord import create_app
from accord.keys import KeyStore
from accord.push import DELIVERY_ID_HEADER, DeliveryIds, SeenTokens, verify
from accord.runtime.delivery import RetrySchedule
from accord.runtime.task_runtime import TaskRuntime
from accord.store import TaskStore, open_store
from agents_for_tests import SAFETY_TIMEOUT, until
from push_agents import reporter
from rpc import RpcClient, connect, send_params, served
from served_process import STARTUP_TIMEOUT, accord_command
from webhooks import LOOPBACK, Webhook, receiving

QUICK = RetrySchedule(attempts=3, first_delay=0.05, max_delay=0.2)
"""Retries within a fraction of a second."""


def push_config(url: str) -> dict[str, Any]:
    return {"pushNotificationConfig": {"url": url, "token": "tok-1"}}


@asynccontextmanager
async def pushing_agent(
    store: TaskStore | None = None, schedule: RetrySchedule = QUICK
) -> AsyncIterator[tuple[str, RpcClient, TaskRuntime]]:
    app = create_app(reporter, store=store, keys=KeyStore.ephemeral(), push_allow=LOOPBACK)
    runtime: TaskRuntime = app.state.runtime
    assert runtime.deliveries is not None
    runtime.deliveries.schedule = schedule
    with served(app) as url:
        async with connect(url) as client:
            yield url, client, runtime


async def settled(runtime: TaskRuntime) -> None:
    """Wait until no delivery is under way or about to be looked for."""
    assert runtime.deliveries is not None
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while runtime.deliveries.busy:
        assert time.monotonic() < deadline, "deliveries still under way"
        await asyncio.sleep(0.02)


async def accord(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the `accord` CLI (off the event loop, which serves the agent meanwhile), with the
    shared limit of a process's start: a loaded machine takes seconds to import accord."""
    return await asyncio.to_thread(
        subprocess.run,
        accord_command(*args),
        capture_output=True, text=True, timeout=STARTUP_TIMEOUT,
    )  # fmt: skip


async def test_a_notification_refused_twice_arrives_on_the_third_try_under_one_delivery_id() -> (
    None
):
    hook = Webhook(failures=2)
    with receiving(hook) as hook_url:
        async with pushing_agent() as (url, client, _):
            params = send_params("retry me", configuration=push_config(hook_url))
            await client.result("message/send", params)
            await hook.reached("completed").wait()
            seen = SeenTokens()
            keys = f"{url}/.well-known/jwks.json"
            notifications = [
                await verify(body, headers, keys=keys, audience=hook_url, seen=seen)
                for headers, body in hook.received
            ]
    # In order: the later notifications waited for the first one's retries.
    assert hook.states() == ["submitted", "working", "completed"]
    ids = [headers[DELIVERY_ID_HEADER.lower()] for headers in hook.tries]
    assert len(ids) == 5 and ids[0] == ids[1] == ids[2]  # three tries of the first
    assert len(set(ids)) == 3
    assert [n.delivery_id for n in notifications] == ids[2:]


@pytest.mark.processes
async def test_a_webhook_that_keeps_failing_is_parked_and_listed(tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path}/accord.db"
    hook = Webhook(failures=1_000)
    with receiving(hook) as hook_url:
        async with pushing_agent(open_store(store_url)) as (_, client, runtime):
            params = send_params("nobody listens", configuration=push_config(hook_url))
            task = await client.result("message/send", params)
            await until(lambda: len(hook.tries) >= QUICK.attempts)
            await settled(runtime)
            parked = await runtime.store.parked_deliveries()
    assert len(hook.tries) == QUICK.attempts  # tried as often as allowed, then never again
    # The first parked, and the queue behind it: newest first.
    assert len(parked) == 3 and [d.seq for d in parked] == sorted(
        (d.seq for d in parked), reverse=True
    )
    assert parked[-1].seq == 1 and parked[-1].attempts == QUICK.attempts
    assert {d.task_id for d in parked} == {task["id"]}
    listed = await accord("push", "failures", "--store", store_url)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert len(lines) == 3
    assert all(task["id"] in line and hook_url in line and "HTTP 500" in line for line in lines)
    assert f"delivery {parked[-1].id}" in lines[-1] and "3 tries" in lines[-1]


@pytest.mark.processes
async def test_parked_deliveries_retried_once_the_webhook_works_arrive_in_order(
    tmp_path: Path,
) -> None:
    store_url = f"sqlite:///{tmp_path}/accord.db"
    hook = Webhook(failures=1_000)
    with receiving(hook) as hook_url:
        async with pushing_agent(open_store(store_url)) as (_, client, runtime):
            tasks = []
            for text in ("first", "second"):
                params = send_params(text, configuration=push_config(hook_url))
                tasks.append((await client.result("message/send", params))["id"])
            await until(lambda: len(hook.tries) == 2 * QUICK.attempts)
            await settled(runtime)
            parked = sorted(await runtime.store.parked_deliveries(), key=lambda d: d.seq)
            first = [d.id for d in parked if d.task_id == tasks[0]]
            second = [d.id for d in parked if d.task_id == tasks[1]]
            assert len(first) == len(second) == 3
            with hook.lock:
                hook.failures = 0  # the webhook is fixed

            retried = await accord(
                "push", "retry", "--all", "--task", tasks[0], "--store", store_url
            )
            assert (retried.returncode, retried.stdout) == (0, "requeued 3 parked deliveries\n")
            await hook.reached("completed").wait()  # the server's worker took them up
            await settled(runtime)
            assert hook.states() == ["submitted", "working", "completed"]  # in order
            assert {d.id for d in await runtime.store.parked_deliveries()} == set(second)

            # By id: the other task's last one only (parked ones hold up no other).
            retried = await accord("push", "retry", second[2], "--store", store_url)
            assert (retried.returncode, retried.stdout) == (0, "requeued 1 parked delivery\n")
            await until(lambda: len(hook.received) == 4)
            again = await accord("push", "retry", second[2], "--store", store_url)
            assert again.returncode == 1
            assert "1 of the 1 deliveries named were not parked" in again.stderr
            await settled(runtime)
    delivered = [headers[DELIVERY_ID_HEADER.lower()] for headers, _ in hook.received]
    assert delivered == [*first, second[2]]
    # Under the delivery id its failed tries had: a receiver dedupes across the retry.
    assert first[0] in {headers[DELIVERY_ID_HEADER.lower()] for headers in hook.tries[:6]}


async def test_a_webhook_that_does_not_answer_holds_up_no_other() -> None:
    fast = Webhook()
    held = threading.Event()
    slow_states: list[str] = []

    async def slow(request: Request) -> Response:
        await asyncio.to_thread(held.wait, SAFETY_TIMEOUT)  # answers once let go
        slow_states.append(json.loads(await request.body())["status"]["state"])
        return Response(status_code=204)

    slow_app = Starlette(routes=[Route("/hook", slow, methods=["POST"])])
    with receiving(fast) as fast_url, served(slow_app) as slow_base:
        async with pushing_agent() as (_, client, runtime):
            slow_params = send_params("slow", configuration=push_config(slow_base + "/hook"))
            await client.result("message/send", slow_params)
            fast_params = send_params("fast", configuration=push_config(fast_url))
            await client.result("message/send", fast_params)
            await fast.reached("completed").wait()  # while the slow webhook holds its first
            assert slow_states == []
            held.set()
            deadline = time.monotonic() + SAFETY_TIMEOUT
            while len(slow_states) < 3:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            await settled(runtime)
    assert fast.states() == ["submitted", "working", "completed"]
    assert slow_states == ["submitted", "working", "completed"]  # its own, in order


def test_delivery_ids_remember_what_was_received() -> None:
    ids = DeliveryIds(size=2)
    assert ids.first("a") and not ids.first("a")
    assert ids.first(None) and ids.first(None)  # a sender without ids: nothing to compare
    assert ids.first("b") and ids.first("c")
    assert ids.first("a")  # forgotten once `size` newer ones came
