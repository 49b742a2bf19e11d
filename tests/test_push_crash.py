"""Push deliveries outlive a crash: real `accord serve` processes killed with SIGKILL between
an event and its delivery deliver it after a restart (SQLite) or from another replica
(PostgreSQL + Redis), under the delivery id of the first try."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from accord.push import DELIVERY_ID_HEADER
from agents_for_tests import SAFETY_TIMEOUT
from rpc import connect, send_params
from served_process import ServedProcess, accord_serve
from services import redis_bus_fixture  # noqa: F401 - a fixture
from test_replicas import pg_store, replicas, sqlite_store  # noqa: F401
from ticker_streams import FAST
from webhooks import Webhook, receiving

pytestmark = pytest.mark.processes

REPORTER = "push_agents:reporter"
ALLOW_LOOPBACK = ("--push-allow", "127.0.0.1")
DOWN = 1_000_000
"""A receiver's `failures` while it is down: every POST fails."""


async def tried_then_killed(server: ServedProcess, hook: Webhook, hook_url: str) -> str:
    """Send a message with `hook` as its webhook (which fails every try), kill the server once
    the first notification was tried; the task's id."""
    async with connect(server.url) as rpc:
        params = send_params("hello", configuration={"pushNotificationConfig": {"url": hook_url}})
        task = await rpc.result("message/send", params)
    deadline = time.monotonic() + SAFETY_TIMEOUT
    while not hook.tries:
        assert time.monotonic() < deadline, "the webhook was never tried"
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)  # the failed try is recorded; the next is a while away
    server.kill()
    with hook.lock:
        hook.failures = 0  # the receiver is back
    return str(task["id"])


def check_delivered(hook: Webhook, task_id: str) -> None:
    assert hook.states() == ["submitted", "working", "completed"]
    assert {body["id"] for _, body in hook.calls} == {task_id}
    first_try = hook.tries[0][DELIVERY_ID_HEADER.lower()]
    assert hook.calls[0][0][DELIVERY_ID_HEADER.lower()] == first_try  # the same delivery


async def test_a_delivery_pending_when_the_server_is_killed_goes_out_after_its_restart(
    tmp_path: Path,
) -> None:
    store = sqlite_store(tmp_path)
    hook = Webhook(failures=DOWN)
    with receiving(hook) as hook_url:
        with accord_serve(REPORTER, *store, *FAST, *ALLOW_LOOPBACK) as server:
            task_id = await tried_then_killed(server, hook, hook_url)
        assert not hook.calls
        with accord_serve(REPORTER, *store, *FAST, *ALLOW_LOOPBACK):
            await hook.reached("completed").wait()
    check_delivered(hook, task_id)


async def test_a_delivery_pending_on_a_killed_replica_goes_out_from_another(
    pg_store: str,  # noqa: F811
    redis_bus: str,
) -> None:
    hook = Webhook(failures=DOWN)
    with (
        receiving(hook) as hook_url,
        replicas(REPORTER, pg_store, redis_bus, *ALLOW_LOOPBACK) as (a, _b),
    ):
        task_id = await tried_then_killed(a, hook, hook_url)
        await hook.reached("completed").wait()
    check_delivered(hook, task_id)
