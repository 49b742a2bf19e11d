"""Tenant isolation on every binding and version: one caller's tasks, contexts and push
configs are unknown to another (TaskNotFound, never listed), whatever wire either uses."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest

from accord import Agent
from accord.auth import ApiKey, Security
from accord.server.limits import NO_LIMITS
from accord.types import new_id
from operations import WIRES, Server, Wire, connect_wire
from test_operations import HOOK, SWITCHBOARD, serve
from wire_facts import Refused, TaskFacts

CALLERS = ("alice", "bob")
API_KEYS = {
    f"key-of-{caller}-{kind.name}": f"{caller}-{kind.name}" for caller in CALLERS for kind in WIRES
}
"""Two callers per wire, so that one wire's tasks never show in another's listings."""


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    agent = Agent(
        SWITCHBOARD,
        name="Shared agent",
        push_notifications=True,
        security=Security(ApiKey(API_KEYS)),
    )
    with serve(agent, limits=NO_LIMITS) as served:
        yield served


@pytest.fixture(params=[pytest.param(kind, id=kind.name) for kind in WIRES])
def kind(request: pytest.FixtureRequest) -> type[Wire]:
    kind: type[Wire] = request.param
    return kind


def key(caller: str, kind: type[Wire]) -> dict[str, str]:
    return {"X-API-Key": f"key-of-{caller}-{kind.name}"}


async def refusal(run: Awaitable[object]) -> str:
    """The reason the server refused `run` with ("ok" when it did not)."""
    try:
        await run
    except Refused as refused:
        return refused.reason
    return "ok"


async def subscribed(wire: Wire, task_id: str) -> None:
    async with wire.subscribe(task_id) as stream:
        await stream.next()


async def test_another_callers_task_is_not_found_by_any_operation(
    kind: type[Wire], server: Server
) -> None:
    async with connect_wire(kind, server, key("alice", kind)) as alice:
        asked = await alice.send("ask me")
        assert isinstance(asked, TaskFacts) and asked.state == "input-required"
        pushed = await alice.set_push(asked.id, "c1", HOOK, "secret")
    task_id = asked.id
    bobs: dict[str, Callable[[Wire], Awaitable[object]]] = {
        "get": lambda bob: bob.get_task(task_id),
        "cancel": lambda bob: bob.cancel(task_id),
        "subscribe": lambda bob: subscribed(bob, task_id),
        "continue": lambda bob: bob.send("an answer", task_id=task_id),
        "continue in its context": lambda bob: bob.send(
            "an answer", task_id=task_id, context_id=asked.context_id
        ),
        "set_push": lambda bob: bob.set_push(task_id, "c2", HOOK, "mine"),
        "get_push": lambda bob: bob.get_push(task_id, "c1"),
        "list_push": lambda bob: bob.list_push(task_id),
        "delete_push": lambda bob: bob.delete_push(task_id, "c1"),
    }

    async with connect_wire(kind, server, key("bob", kind)) as bob:
        found = {name: await refusal(run(bob)) for name, run in bobs.items()}
        joined = await refusal(bob.send("let me in", context_id=asked.context_id))
        if "list_tasks" not in kind.lacks:
            listed = await bob.list_tasks()
            assert (listed.ids, listed.total_size) == ([], 0)
            of_context = await bob.list_tasks(contextId=asked.context_id)
            assert (of_context.ids, of_context.total_size) == ([], 0)

    assert found == dict.fromkeys(bobs, "TASK_NOT_FOUND")
    assert joined == "INVALID_PARAMS"
    async with connect_wire(kind, server, key("alice", kind)) as alice:  # all still hers
        assert await alice.list_push(task_id) == [pushed]
        assert (await alice.get_task(task_id)).state == "input-required"
        answered = await alice.send("an answer", task_id=task_id)
        assert isinstance(answered, TaskFacts) and answered.state == "completed"
        if "list_tasks" not in kind.lacks:
            listed = await alice.list_tasks()
            assert task_id in listed.ids


@pytest.mark.parametrize(
    "kind", [pytest.param(k, id=k.name) for k in WIRES if "list_tasks" not in k.lacks]
)
async def test_each_caller_lists_only_its_own_tasks(kind: type[Wire], server: Server) -> None:
    made: dict[str, list[str]] = {}
    for caller in CALLERS:
        async with connect_wire(kind, server, key(caller, kind)) as wire:
            made[caller] = []
            for n in range(3):
                task = await wire.send(f"task {n} of {caller}")
                assert isinstance(task, TaskFacts)
                made[caller].append(task.id)

    for caller in CALLERS:
        async with connect_wire(kind, server, key(caller, kind)) as wire:
            first = await wire.list_tasks(pageSize=2)
            rest = await wire.list_tasks(pageSize=2, pageToken=first.next_token)
        assert set(first.ids + rest.ids) >= set(made[caller])
        others = {task for other, tasks in made.items() if other != caller for task in tasks}
        assert not others & set(first.ids + rest.ids)
        assert first.total_size == rest.total_size == len(first.ids + rest.ids)


async def test_a2a_0_1_callers_cannot_reach_or_take_over_anothers_task_id(server: Server) -> None:
    """0.1 clients choose task ids: another's id is TaskNotFound, never a task of one's own."""
    task_id, session = f"t-{new_id()}", f"s-{new_id()}"

    async def call(caller: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        headers = {"X-API-Key": f"key-of-{caller}-{WIRES[0].name}"}
        async with httpx.AsyncClient(base_url=server.base_url) as http:
            answer: dict[str, Any] = (await http.post("/", json=body, headers=headers)).json()
        return answer

    def send(text: str, task: str = task_id) -> dict[str, Any]:
        message = {"role": "user", "parts": [{"type": "text", "text": text}]}
        return {"id": task, "sessionId": session, "message": message}

    asked = await call("alice", "tasks/send", send("ask me"))
    assert asked["result"]["status"]["state"] == "input-required"
    refused = {
        "send": await call("bob", "tasks/send", send("an answer")),
        "get": await call("bob", "tasks/get", {"id": task_id}),
        "cancel": await call("bob", "tasks/cancel", {"id": task_id}),
    }
    joined = await call("bob", "tasks/send", send("let me in", f"t-{new_id()}"))
    answered = await call("alice", "tasks/send", send("an answer"))

    assert {name: answer["error"]["code"] for name, answer in refused.items()} == dict.fromkeys(
        refused, -32001
    )
    assert joined["error"]["code"] == -32602
    assert answered["result"]["status"]["state"] == "completed"
