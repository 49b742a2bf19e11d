"""Fencing in every store: a writer that lost its claim, or writes past the end, changes nothing."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from accord.core.records import EventRecord
from accord.store import LostTaskError, StaleTaskError, TaskStore
from accord.types import (
    Artifact,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TextPart,
    new_id,
)
from stores import Backend, backend_fixture, store_fixture  # noqa: F401 - fixtures

PROPERTY = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
STATES = [
    TaskState.WORKING,
    TaskState.INPUT_REQUIRED,
    TaskState.COMPLETED,
    TaskState.CANCELED,
    TaskState.FAILED,
]


@dataclass
class Claimant:
    """A writer's idea of the task: the version it writes from, the epoch it writes under."""

    seq: int = 1
    epoch: int = 0


@dataclass
class Model:
    """What the store must hold: the version, the epoch, and whether the task has ended."""

    seq: int = 1
    epoch: int = 0
    ended: bool = False

    def accepts(self, previous: int, epoch: int) -> bool:
        return not self.ended and epoch == self.epoch and previous == self.seq


claims = st.tuples(st.just("claim"), st.sampled_from("AB"))
writes = st.tuples(
    st.just("write"),
    st.sampled_from("AB"),
    st.sampled_from(STATES),
    st.booleans(),  # an artifact update (appended to the log) rather than the task
    st.sampled_from([0, 0, 0, -1, 1]),  # off the writer's version by this much
    st.booleans(),  # the writer moves its version on even when refused
)
steps = st.lists(st.lists(claims | writes, min_size=1, max_size=3), min_size=1, max_size=12)
"""Rounds of operations; the writes of a round are staged together, in one commit where the
store groups them."""


def version(task_id: str, state: TaskState, seq: int, artifact: bool) -> tuple[Task, EventRecord]:
    """A task at `seq` and the record of its save: the task itself, or an artifact update."""
    task = Task(id=task_id, context_id="ctx", status=TaskStatus(state=state))
    if not artifact or state.is_terminal:
        return task, EventRecord.of(task_id, seq, task, final=state.is_terminal)
    chunk = Artifact(artifact_id=new_id(), parts=[TextPart(text=f"chunk {seq}")])
    task.artifacts = [chunk]
    update = TaskArtifactUpdateEvent(task_id=task_id, context_id="ctx", artifact=chunk)
    return task, EventRecord.of(task_id, seq, update, final=False)


async def snapshot(store: TaskStore, task_id: str) -> tuple[Any, ...]:
    stored = await store.get(task_id)
    assert stored is not None
    logged = [(r.seq, r.final, r.payload) for r in await store.events_after(task_id, 0)]
    return stored.task.to_json(), stored.seq, stored.epoch, logged


@PROPERTY
@given(rounds=steps)
@example(  # a stale save, then one from the version the store holds, in one commit
    rounds=[
        [("write", "A", TaskState.WORKING, False, 0, False), ("claim", "B")],
        [
            ("write", "B", TaskState.WORKING, False, -1, False),
            ("write", "B", TaskState.COMPLETED, False, 0, False),
            ("claim", "A"),
        ],
    ]
)
async def test_claimants_with_stale_epochs_never_change_an_ended_task(
    store: TaskStore, rounds: list[list[tuple[Any, ...]]]
) -> None:
    task_id = new_id()
    first, record = version(task_id, TaskState.SUBMITTED, 1, artifact=False)
    await store.save(first, 1, record)
    claimants = {"A": Claimant(), "B": Claimant()}  # both think they hold it
    model = Model()
    ended: tuple[Any, ...] | None = None
    for operations in rounds:
        staged: list[tuple[asyncio.Future[None], bool]] = []
        for operation in operations:
            who = claimants[operation[1]]
            if operation[0] == "claim":
                await asyncio.gather(*(saved for saved, _ in staged), return_exceptions=True)
                claimed = await store.claim(task_id, operation[1])
                assert (claimed is None) == model.ended
                if claimed is not None:
                    model.epoch += 1
                    assert (claimed.seq, claimed.epoch) == (model.seq, model.epoch)
                    who.seq, who.epoch = claimed.seq, claimed.epoch
                continue
            _, _, state, artifact, off, moves_on = operation
            previous = who.seq + off
            if previous < 1:
                continue
            task, record = version(task_id, state, previous + 1, artifact)
            if staged and not staged[-1][1]:
                # A save staged behind a refused one in one commit may be merged with it and
                # refused too (the store cannot tell a writer's version from another's at the
                # same number): which of them the store takes is only certain in turn.
                await asyncio.gather(*(saved for saved, _ in staged), return_exceptions=True)
            saved = store.stage_records(task, [record], epoch=who.epoch)
            accepted = model.accepts(previous, who.epoch)
            staged.append((saved, accepted))
            if accepted:
                model.seq, model.ended = previous + 1, state.is_terminal
            if accepted or moves_on:
                who.seq = previous + 1
        outcomes = await asyncio.gather(*(saved for saved, _ in staged), return_exceptions=True)
        for outcome, (_, accepted) in zip(outcomes, staged, strict=True):
            if accepted:
                assert outcome is None
            else:
                assert isinstance(outcome, StaleTaskError)
        now = await snapshot(store, task_id)
        assert now[1:3] == (model.seq, model.epoch)
        if ended is not None:
            assert now == ended  # nothing changed since it ended: row, JSON, log
        elif model.ended:
            ended = now


async def test_a_write_under_an_earlier_epoch_is_refused_as_lost(store: TaskStore) -> None:
    task, record = version(new_id(), TaskState.WORKING, 1, artifact=False)
    await store.save(task, 1, record)
    claimed = await store.claim(task.id, "replica-b")
    assert claimed is not None and claimed.epoch == 1

    moved, chunk = version(task.id, TaskState.WORKING, 2, artifact=True)
    with pytest.raises(LostTaskError, match="epoch 1, not 0"):
        await store.save(moved, 2, chunk)  # the old claimant, at the right version
    await store.save(moved, 2, chunk, epoch=1)

    ended, final = version(task.id, TaskState.CANCELED, 3, artifact=False)
    await store.save(ended, 3, final, epoch=1)
    late, late_record = version(task.id, TaskState.FAILED, 4, artifact=False)
    with pytest.raises(LostTaskError, match="has ended"):
        await store.save(late, 4, late_record, epoch=1)  # the holder itself, after the end
    assert await store.claim(task.id, "replica-a") is None
    stored = await store.get(task.id)
    assert stored is not None and stored.task.status.state is TaskState.CANCELED


async def test_a_claim_at_a_version_the_task_has_left_claims_nothing(store: TaskStore) -> None:
    task, record = version(new_id(), TaskState.INPUT_REQUIRED, 1, artifact=False)
    await store.save(task, 1, record)

    assert await store.claim(task.id, "replica-a", at_seq=2) is None
    claimed = await store.claim(task.id, "replica-a", at_seq=1)
    assert claimed is not None and (claimed.seq, claimed.epoch) == (1, 1)
    assert await store.claim("no-such-task", "replica-a") is None
