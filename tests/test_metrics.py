"""Prometheus metrics of an app: scraped after known traffic, parsed with prometheus_client's
parser, exact counts; one registry per app."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from accord import Agent, Client, create_app
from accord.auth import ApiKey, Security
from accord.errors import RateLimited, TaskNotFound, Unauthenticated
from accord.observability.metrics import Metrics, serve_metrics
from accord.samples import echo
from accord.server.limits import Limits
from agents_for_tests import SAFETY_TIMEOUT
from rpc import served

KEY = {"X-API-Key": "key-of-alice"}


def keyed() -> Agent:
    return Agent(
        echo.agent.executor, name="Keyed echo", security=Security(ApiKey({"key-of-alice": "alice"}))
    )


def scrape(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, by name and labels."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def requests(operation: str, binding: str, outcome: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    labels = {"operation": operation, "version": "1.0", "binding": binding, "outcome": outcome}
    return "a2a_server_requests_total", tuple(sorted(labels.items()))


async def test_metrics_count_known_traffic_exactly() -> None:
    # Four requests of alice's pass, the fifth is over the limit.
    app = create_app(keyed(), limits=Limits(requests_per_second=0.001, burst=4))
    Metrics().install(app, route=True)
    other = create_app(echo.agent)
    Metrics().install(other, route=True)
    with served(app) as url, served(other) as other_url:
        for binding in ("JSONRPC", "JSONRPC", "HTTP+JSON"):
            async with Client(url, transport=binding, version="1.0", headers=KEY) as client:
                await client.send("hi")
        async with Client(url, transport="JSONRPC", version="1.0", headers=KEY) as client:
            with pytest.raises(TaskNotFound):
                await client.get_task("no-such-task")
            with pytest.raises(RateLimited):
                await client.send("one too many")
        for _ in range(2):
            async with Client(url, transport="JSONRPC", version="1.0") as anonymous:
                with pytest.raises(Unauthenticated):
                    await anonymous.send("hi")
        async with httpx.AsyncClient(timeout=SAFETY_TIMEOUT) as http:
            answer = await http.get(url + "/metrics")
            untouched = scrape((await http.get(other_url + "/metrics")).text)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    samples = scrape(answer.text)
    counted = {
        key: value for key, value in samples.items() if key[0] == "a2a_server_requests_total"
    }
    assert counted == {
        requests("send_message", "JSONRPC", "ok"): 2,
        requests("send_message", "HTTP+JSON", "ok"): 1,
        requests("get_task", "JSONRPC", "TaskNotFound"): 1,
        requests("send_message", "JSONRPC", "RateLimited"): 1,
    }
    assert samples["a2a_authentication_refusals_total", (("binding", "JSONRPC"),)] == 2
    assert samples["a2a_rate_limit_refusals_total", (("operation", "send_message"),)] == 1
    assert samples["a2a_agent_runs_total", (("outcome", "returned"),)] == 3
    assert samples["a2a_agent_runs_active", ()] == 0
    assert samples["a2a_task_states_total", (("state", "completed"),)] == 3
    assert samples["a2a_streams_open", ()] == 0
    timed = ("operation", "send_message"), ("version", "1.0"), ("binding", "JSONRPC")
    assert samples["a2a_server_request_duration_seconds_count", tuple(sorted(timed))] == 3
    # The other app in this process counted nothing of it.
    assert not [key for key in untouched if key[0] == "a2a_server_requests_total"]


async def test_metrics_on_a_port_of_their_own() -> None:
    metrics = Metrics()
    app = create_app(echo.agent)
    metrics.install(app)
    server = serve_metrics(metrics, 0)
    port = server.server_port
    with served(app) as url:
        async with Client(url, transport="HTTP+JSON", version="1.0") as client:
            await client.send("hi")
        async with httpx.AsyncClient(timeout=SAFETY_TIMEOUT) as http:
            assert (await http.get(url + "/metrics")).status_code == 404  # not on the app's port
            samples = scrape((await http.get(f"http://127.0.0.1:{port}/metrics")).text)
    server.shutdown()
    assert samples[requests("send_message", "HTTP+JSON", "ok")] == 1
