"""GroupCommit: saves queued together share one commit, and each keeps its own outcome."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from accord.store.sql.group_commit import GroupCommit, Outcome


class Log:
    """A fake transaction: records each batch; odd items are refused, "boom" breaks a batch."""

    def __init__(self) -> None:
        self.batches: list[list[int | str]] = []

    async def commit(self, items: Sequence[int | str]) -> list[Outcome]:
        self.batches.append(list(items))
        if "boom" in items:
            raise RuntimeError("the transaction broke")
        return [ValueError(item) if isinstance(item, int) and item % 2 else None for item in items]


async def test_items_queued_together_are_committed_in_one_batch() -> None:
    log = Log()
    writer = GroupCommit(log.commit)

    outcomes = await asyncio.gather(*(writer.submit(i) for i in range(4)), return_exceptions=True)

    assert log.batches == [[0, 1, 2, 3]]
    assert [type(outcome).__name__ for outcome in outcomes] == [
        "NoneType",
        "ValueError",
        "NoneType",
        "ValueError",
    ]


async def test_a_broken_batch_is_retried_one_item_at_a_time() -> None:
    log = Log()
    writer = GroupCommit(log.commit)

    outcomes = await asyncio.gather(
        *(writer.submit(item) for item in (0, "boom", 2)), return_exceptions=True
    )

    assert log.batches == [[0, "boom", 2], [0], ["boom"], [2]]
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], RuntimeError)


async def test_items_queued_during_a_commit_form_the_next_batch() -> None:
    log = Log()
    committing, release = asyncio.Event(), asyncio.Event()

    async def slow_commit(items: Sequence[int | str]) -> list[Outcome]:
        committing.set()
        await release.wait()
        return await log.commit(items)

    writer = GroupCommit(slow_commit)
    first = asyncio.ensure_future(writer.submit(0))
    await committing.wait()
    later = asyncio.gather(writer.submit(2), writer.submit(4))
    release.set()
    await asyncio.gather(first, later)

    assert log.batches == [[0], [2, 4]]


async def test_a_refused_item_raises_for_its_caller_only() -> None:
    writer = GroupCommit(Log().commit)

    with pytest.raises(ValueError):
        await writer.submit(1)
    await writer.submit(2)
