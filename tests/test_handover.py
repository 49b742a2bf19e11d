"""Handover: a task no run of this replica holds is canceled, resumed or failed under a claim."""

from __future__ import annotations

from accord.core.principal import ANONYMOUS_OWNER
from accord.runtime.bus import InProcessEventBus
from accord.runtime.follow import Follower
from accord.runtime.handover import Handover, detached_run
from accord.runtime.lifecycle import RunLifecycle
from accord.runtime.replicas import Replicas
from accord.runtime.runs import Runs
from accord.runtime.staging import Staging
from accord.store import InMemoryTaskStore, StoredTask
from accord.types import Message, Role, TaskState, TextPart, new_id
from agents_for_tests import AsksThenCompletes
from runtime_parts import task_in, user_message


class Host:
    """The runtime's side, as `Replicas` sees it: nothing runs here."""

    def is_running(self, task_id: str) -> bool:
        return False

    async def cancel(self, task_id: str) -> object:
        return None

    async def resume(self, stored: StoredTask) -> None:
        return None

    async def abandon(self, stored: StoredTask) -> None:
        return None


def handover(store: InMemoryTaskStore) -> tuple[Handover, Runs]:
    bus, runs = InProcessEventBus(), Runs()
    staging = Staging(store, bus, "r1", None, on_lost=lambda run, reason: None)
    lifecycle = RunLifecycle(AsksThenCompletes(), runs, staging, bus, debug=False)
    replicas = Replicas(Host(), store, bus, "r1", 15.0, restartable=False)
    follower = Follower(store, bus, runs)
    return Handover(store, bus, "r1", runs, lifecycle, follower, replicas), runs


def test_a_detached_run_carries_the_last_user_message_and_the_stored_owner() -> None:
    asked = user_message("first")
    answer = Message(message_id=new_id(), role=Role.AGENT, parts=[TextPart(text="?")])
    task = task_in(TaskState.INPUT_REQUIRED, history=[asked, answer])
    run = detached_run(StoredTask(task, 4, "apiKey:alice", epoch=2))
    assert run.context.message is asked
    assert (run.seq, run.epoch, run.owner) == (4, 2, "apiKey:alice")
    assert run.context.principal.owner == "apiKey:alice"
    bare = detached_run(StoredTask(task_in(TaskState.WORKING), 1, ANONYMOUS_OWNER))
    assert bare.context.message.role is Role.USER and not bare.context.message.parts


async def test_a_waiting_task_is_canceled_under_a_claim_of_its_own_and_leaves_no_run() -> None:
    store = InMemoryTaskStore()
    task = task_in(TaskState.INPUT_REQUIRED)
    await store.save(task, 1)
    parts, runs = handover(store)
    canceled = await parts.cancel(task.id, None, None)
    assert canceled.status.state is TaskState.CANCELED
    stored = await store.get(task.id)
    assert stored is not None and stored.task.status.state is TaskState.CANCELED
    assert (stored.seq, stored.epoch) == (2, 1)
    assert task.id not in runs


async def test_an_adopted_task_abandoned_ends_failed() -> None:
    store = InMemoryTaskStore()
    task = task_in(TaskState.WORKING)
    await store.save(task, 1)
    parts, runs = handover(store)
    claimed = await store.take_over(task.id, None, "r1")
    assert claimed is not None
    await parts.abandon(claimed)
    stored = await store.get(task.id)
    assert stored is not None and stored.task.status.state is TaskState.FAILED
    assert task.id not in runs
