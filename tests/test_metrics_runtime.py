"""The runtime's metrics, scraped from a real server after known traffic: store latency per
operation, the push outbox's depth, deliveries by outcome and retries, the bus's lag."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from starlette.requests import Request
from starlette.responses import Response

from accord import Agent, Client, create_app
from accord.observability.metrics import Metrics, serve_metrics
from accord.runtime.bus_factory import open_bus
from accord.runtime.delivery import RetrySchedule
from accord.samples import echo
from accord.store import open_store
from accord.types import PushNotificationConfig, Task, TaskState
from agents_for_tests import SAFETY_TIMEOUT, GatedStreamer, until
from rpc import served
from services import redis_bus_fixture  # noqa: F401 - a fixture
from test_metrics import scrape
from webhooks import LOOPBACK, Webhook, receiving

QUICK_RETRIES = RetrySchedule(first_delay=0.01, jitter=0)


class Gone(Webhook):
    """A webhook that is no more: every POST gets 410, which no retry changes."""

    async def handle(self, request: Request) -> Response:
        with self.lock:
            self.tries.append(dict(request.headers))
        return Response(status_code=410)


def pushing() -> Agent:
    return Agent(echo.agent.executor, name="Reporter", push_notifications=True)


async def scraped(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    async with httpx.AsyncClient(timeout=SAFETY_TIMEOUT) as http:
        return scrape((await http.get(url + "/metrics")).text)


def one(name: str, **labels: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return name, tuple(sorted(labels.items()))


async def test_store_latency_outbox_depth_and_delivery_outcomes(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'tasks.db'}")
    app = create_app(pushing(), store=store, push_allow=LOOPBACK, push_schedule=QUICK_RETRIES)
    Metrics().install(app, route=True)
    flaky, gone = Webhook(failures=1), Gone()
    with receiving(flaky) as flaky_url, receiving(gone) as gone_url, served(app) as url:
        async with Client(url, transport="JSONRPC", version="0.3") as client:  # a Task a POST
            task = await client.send("hi", push=PushNotificationConfig(url=flaky_url))
            assert isinstance(task, Task)
            await flaky.reached(TaskState.COMPLETED.value).wait()
            sent = len(flaky.calls)
            await until(lambda: len(flaky.tries) == sent + 1, "the flaky webhook's tries")
            await client.send("bye", push=PushNotificationConfig(url=gone_url))
            await until(lambda: len(gone.tries) >= 1, "a try of the gone webhook")
            before = await scraped(url)
            for _ in range(3):
                await client.get_task(task.id)
            await until(
                lambda: len(gone.tries) == sent, "every notification tried on the gone webhook"
            )
        samples = await scraped(url)
    assert sent >= 1
    # One try failed with 500 and was retried; every notification reached the flaky webhook.
    assert samples[one("a2a_push_retries_total")] == 1
    assert samples[one("a2a_push_deliveries_total", outcome="delivered")] == sent
    # 410 parks each of the gone webhook's notifications, and only that one.
    assert samples[one("a2a_push_deliveries_total", outcome="parked")] == sent
    assert samples[one("a2a_push_outbox_deliveries", state="parked")] == sent
    assert samples[one("a2a_push_outbox_deliveries", state="waiting")] == 0
    reads = one("a2a_store_operation_duration_seconds_count", operation="get_task")
    assert samples[reads] - before.get(reads, 0) == 3
    saves = one("a2a_store_operation_duration_seconds_count", operation="save")
    assert samples[saves] >= 2  # a save at least per task: the events of one turn go as one
    assert samples[one("a2a_store_operation_duration_seconds_sum", operation="save")] > 0


async def test_the_outbox_depth_on_a_port_of_its_own() -> None:
    gone = Gone()
    app = create_app(pushing(), push_allow=LOOPBACK)
    metrics = Metrics()
    metrics.install(app)
    server = serve_metrics(metrics, 0)
    with receiving(gone) as gone_url, served(app) as url:
        async with Client(url, transport="JSONRPC", version="1.0") as client:
            await client.send("bye", push=PushNotificationConfig(url=gone_url))
        await until(lambda: len(gone.tries) >= 1, "a try of the gone webhook")
        parked = one("a2a_push_outbox_deliveries", state="parked")
        port_url = f"http://127.0.0.1:{server.server_port}"
        counts: list[float] = []

        async def parked_counted() -> bool:
            counts.append((await scraped(port_url))[parked])
            return counts[-1] >= 1

        for _ in range(int(SAFETY_TIMEOUT / 0.02)):  # each scrape asks the store anew
            if await parked_counted():
                break
            await asyncio.sleep(0.02)
        server.shutdown()
    assert counts[-1] == len(gone.tries)


async def test_bus_lag_of_records_another_replica_published(redis_bus: str, tmp_path: Path) -> None:
    gated = GatedStreamer()
    replicas = []
    for _ in range(2):  # two replicas of one agent, sharing a store and a Redis bus
        app = create_app(
            Agent(gated, name="Gated"),
            store=open_store(f"sqlite:///{tmp_path / 'tasks.db'}"),
            bus=open_bus(redis_bus),
        )
        Metrics().install(app, route=True)
        replicas.append(app)
    with served(replicas[0]) as runner_url, served(replicas[1]) as watcher_url:
        async with (
            Client(runner_url, transport="JSONRPC", version="1.0") as runner,
            Client(watcher_url, transport="JSONRPC", version="1.0") as watcher,
            runner.stream("hi") as stream,
        ):
            first = await anext(stream)
            assert isinstance(first, Task)
            await gated.started.wait()
            async with watcher.resubscribe(first.id) as following:
                await anext(following)  # the task as stored: the watcher follows the bus now
                gated.release_all()
                relayed = [event async for event in following]
        lags = await scraped(watcher_url)
        runner_lags = await scraped(runner_url)
    assert len(relayed) == 2  # the artifact and the completed status, by the bus
    # Each record the runner published since the watcher began to follow (its bus reads the
    # task's stream from a little before then: the earlier ones too).
    assert 2 <= lags[one("a2a_bus_delivery_lag_seconds_count")] <= 4
    assert lags[one("a2a_bus_delivery_lag_seconds_sum")] < SAFETY_TIMEOUT
    # The runner's own subscribers get its records from it, not by the bus: no lag there.
    assert runner_lags[one("a2a_bus_delivery_lag_seconds_count")] == 0
