"""One run at a time in each A2A context, so that no turn of a conversation overwrites another."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ContextTurns:
    """The runs of one context, one after the other in the order they came; runs of other
    contexts do not wait.

    A framework's conversation (a history in memory, a LangGraph thread, an ADK session) is
    read when a run starts and written when it ends. Two messages of one context run at once
    would each start from the conversation without the other's turn, and the one that ended
    last would leave the other's turn out.
    """

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._holders: dict[str, int] = {}  # the runs holding or waiting for each lock

    @asynccontextmanager
    async def turn(self, context_id: str) -> AsyncIterator[None]:
        """Wait until no other run of `context_id` holds its turn, and hold it."""
        lock = self._locks.get(context_id)
        if lock is None:
            lock = self._locks[context_id] = asyncio.Lock()
        self._holders[context_id] = self._holders.get(context_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._holders[context_id] -= 1
            if not self._holders[context_id]:  # nobody left: forget the context
                del self._holders[context_id], self._locks[context_id]

    def __len__(self) -> int:
        return len(self._locks)
