"""Tenant isolation across replicas: the owner is stored with the task, so a caller reaches
only its own tasks on whichever `accord serve` process answers (PostgreSQL + Redis)."""

from __future__ import annotations

import pytest

from accord import Client
from accord.client import ApiKey
from accord.errors import TaskNotFound
from accord.types import Task, TaskState
from test_replicas import pg_store, redis_bus, replicas  # noqa: F401 - fixtures

pytestmark = pytest.mark.processes


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
        async with caller(b.url, "alice") as alice_on_b:
            found = await alice_on_b.get_task(asked.id)
            hers = await alice_on_b.list_tasks()
            canceled = await alice_on_b.cancel_task(asked.id)

    assert (listed.tasks, listed.total_size) == ([], 0)
    assert found.status.state is TaskState.INPUT_REQUIRED
    assert [task.id for task in hers.tasks] == [asked.id]
    assert canceled.status.state is TaskState.CANCELED
