"""Abuse limits plug into the pipeline as hooks: per-caller request rates and open streams,
refused as 429 + Retry-After (JSON-RPC and HTTP+JSON) and RESOURCE_EXHAUSTED (gRPC)."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest

import accord
from accord import Client
from accord.errors import RateLimited
from accord.grpc.generated.v1_0 import a2a_pb2 as pb
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as rpc
from accord.samples import echo, ticker
from accord.server.limits import RateLimit, StreamLimit
from accord.types import TransportProtocol
from live_server import serve_app

GET_UNKNOWN = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "nope"}}


def test_a_bucket_refills_at_its_rate() -> None:
    limit = RateLimit(per_second=2, burst=2)
    limit.take("ada", now=0.0)
    limit.take("ada", now=0.0)
    with pytest.raises(RateLimited) as refused:
        limit.take("ada", now=0.0)
    assert refused.value.retry_after == pytest.approx(0.5)
    limit.take("bob", now=0.0)  # every caller has a bucket of their own
    limit.take("ada", now=0.5)
    with pytest.raises(RateLimited):
        limit.take("ada", now=0.5)


@pytest.fixture(scope="module")
def rate_limited() -> Iterator[tuple[str, str]]:
    app = accord.create_app(echo.agent, hooks=[RateLimit(per_second=0.01, burst=2)], grpc_port=0)
    with serve_app(app) as url:
        served = app.state.service.interfaces.served_interfaces(url + "/")
        grpc_url = next(i.url for i in served if i.transport == TransportProtocol.GRPC)
        yield url, grpc_url


async def test_over_the_rate_every_binding_says_when_to_retry(
    rate_limited: tuple[str, str],
) -> None:
    url, grpc_url = rate_limited
    async with httpx.AsyncClient() as http:
        answers = [(await http.post(url + "/", json=GET_UNKNOWN)) for _ in range(3)]
        rest = await http.get(url + "/tasks/nope", headers={"A2A-Version": "1.0"})
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[2].json()["error"]["code"] == RateLimited.code
    assert float(answers[2].headers["retry-after"]) >= 1
    assert rest.status_code == 429 and rest.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert "retry-after" in rest.headers
    async with grpc.aio.insecure_channel(grpc_url) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await rpc.A2AServiceStub(channel).GetTask(pb.GetTaskRequest(id="nope"))
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_streams_beyond_the_limit_are_refused_until_one_ends() -> None:
    limit = StreamLimit(per_caller=1)
    app = accord.create_app(ticker.agent, hooks=[limit])
    with serve_app(app) as url:
        async with Client(url) as first, Client(url) as second:
            stream = first.stream("3")
            events = [await anext(stream)]
            with pytest.raises(RateLimited, match="open streams"):
                async for _ in second.stream("1"):
                    pass
            events.extend([event async for event in stream])
            assert len(events) > 3
            assert [event async for event in second.stream("1")]
    assert limit.open_streams("peer:127.0.0.1") == 0


@pytest.mark.parametrize(
    ("transport", "version"), [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("HTTP+JSON", "0.3")]
)
async def test_the_client_waits_as_long_as_the_server_says(transport: str, version: str) -> None:
    app = accord.create_app(echo.agent, hooks=[RateLimit(per_second=0.01, burst=1)])
    with serve_app(app) as url:
        async with Client(url, transport=transport, version=version) as client:
            await client.send("one")
            with pytest.raises(RateLimited) as refused:
                await client.send("two")
            with pytest.raises(RateLimited) as refused_stream:
                async for _ in client.stream("three"):
                    pass
    assert refused.value.retry_after >= 90  # one request per 100 s, as `Retry-After` says
    assert refused_stream.value.retry_after >= 90
