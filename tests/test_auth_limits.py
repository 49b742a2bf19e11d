"""Abuse limits per principal on every binding: tasks at work, request timeouts, requests per
second; the safe defaults an agent declaring security gets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import accord
from accord.auth import ApiKey, Security
from accord.samples import echo
from accord.server.authorization import Authorization
from accord.server.limits import (
    NO_LIMITS,
    ActiveTaskLimit,
    Limits,
    RateLimit,
    RequestTimeout,
    StreamLimit,
)
from accord.server.tenants import TenantCheck
from agents_for_tests import NeverFinishes
from operations import WIRES, Server, Wire, connect_wire
from test_operations import serve
from wire_facts import Refused

KEYS = {f"{role}-{kind.name}": f"{role}-{kind.name}" for kind in WIRES for role in "abt"}


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    agent = accord.Agent(NeverFinishes(), name="Busy", security=Security(ApiKey(KEYS)))
    limits = Limits(
        requests_per_second=None, streams_per_caller=None, tasks_per_caller=1, request_timeout=0.3
    )
    with serve(agent, limits=limits) as served:
        yield served


@pytest.fixture(params=[pytest.param(kind, id=kind.name) for kind in WIRES])
def kind(request: pytest.FixtureRequest) -> type[Wire]:
    kind: type[Wire] = request.param
    return kind


async def test_one_principal_may_keep_only_so_many_tasks_at_work(
    kind: type[Wire], server: Server
) -> None:
    async with connect_wire(kind, server, {"X-API-Key": f"a-{kind.name}"}) as wire:
        await wire.send("first", blocking=False)
        with pytest.raises(Refused) as refused:
            await wire.send("second", blocking=False)
    assert refused.value.reason == "RESOURCE_EXHAUSTED"
    assert "at most 1 per caller" in refused.value.message
    async with connect_wire(kind, server, {"X-API-Key": f"b-{kind.name}"}) as other:
        await other.send("another caller's first", blocking=False)


async def test_a_request_outlasting_the_timeout_is_refused_and_its_task_goes_on(
    kind: type[Wire], server: Server
) -> None:
    async with connect_wire(kind, server, {"X-API-Key": f"t-{kind.name}"}) as wire:
        with pytest.raises(Refused) as refused:
            await wire.send("never answers")
        assert refused.value.reason == "DEADLINE_EXCEEDED"
        with pytest.raises(Refused) as busy:  # the task still works for this caller
            await wire.send("one more", blocking=False)
        assert busy.value.reason == "RESOURCE_EXHAUSTED"


async def test_requests_per_second_are_counted_per_principal() -> None:
    agent = accord.Agent(echo.agent.executor, name="Echo", security=Security(ApiKey(KEYS)))
    limits = Limits(requests_per_second=0.01, burst=2)
    with serve(agent, limits=limits) as server:
        kind = WIRES[0]
        async with connect_wire(kind, server, {"X-API-Key": f"a-{kind.name}"}) as wire:
            await wire.send("one")
            await wire.send("two")
            with pytest.raises(Refused) as refused:
                await wire.send("three")
        assert refused.value.reason == "RESOURCE_EXHAUSTED"
        async with connect_wire(kind, server, {"X-API-Key": f"b-{kind.name}"}) as other:
            await other.send("someone else")


async def test_an_address_failing_authentication_is_slowed_down() -> None:
    agent = accord.Agent(echo.agent.executor, name="Echo", security=Security(ApiKey(KEYS)))
    with serve(agent, limits=Limits(failed_authentications_per_second=0.01)) as server:
        for kind in (WIRES[0], WIRES[-1]):  # JSON-RPC, gRPC
            reasons = []
            for key in ("guess-1", "guess-2", f"a-{kind.name}"):
                async with connect_wire(kind, server, {"X-API-Key": key}) as wire:
                    with pytest.raises(Refused) as refused:
                        await wire.send("hi")
                    reasons.append(refused.value.reason)
            first = "UNAUTHENTICATED" if kind is WIRES[0] else "RESOURCE_EXHAUSTED"
            assert reasons == [first, "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED"]


def hook_types(agent: accord.Agent, **options: object) -> list[type]:
    return [type(hook) for hook in accord.create_app(agent, **options).state.pipeline.hooks]


def test_an_agent_declaring_security_gets_the_safe_limits_by_default() -> None:
    secured = accord.Agent(echo.agent.executor, name="S", security=Security(ApiKey({"k": "a"})))
    assert hook_types(secured) == [
        RateLimit,
        StreamLimit,
        ActiveTaskLimit,
        RequestTimeout,
        Authorization,
        TenantCheck,
    ]
    assert hook_types(secured, limits=NO_LIMITS) == [Authorization, TenantCheck]
    assert hook_types(echo.agent) == []
    assert hook_types(echo.agent, limits=Limits(request_timeout=None)) == [
        RateLimit,
        StreamLimit,
        ActiveTaskLimit,
    ]
    defaults = Limits()
    assert (defaults.requests_per_second, defaults.streams_per_caller) == (50.0, 32)
    assert (defaults.tasks_per_caller, defaults.request_timeout) == (32, 300.0)
