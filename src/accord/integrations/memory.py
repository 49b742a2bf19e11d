"""What an adapter keeps per A2A context between turns (a conversation's history), in memory
and bounded."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

from accord.integrations.turns import ContextTurns

T = TypeVar("T")

DEFAULT_CONTEXTS = 1000
"""How many contexts a memory keeps before it forgets the least recently used."""


class ContextMemory(Generic[T]):
    """A value per context id, the least recently used forgotten past `limit` contexts; the
    runs that read and write a context's value take `turns` (one at a time per context)."""

    def __init__(self, limit: int = DEFAULT_CONTEXTS) -> None:
        if limit < 1:
            raise ValueError("a context memory keeps at least one context")
        self.limit = limit
        self.turns = ContextTurns()
        self._values: OrderedDict[str, T] = OrderedDict()

    def get(self, context_id: str) -> T | None:
        value = self._values.get(context_id)
        if value is not None:
            self._values.move_to_end(context_id)
        return value

    def put(self, context_id: str, value: T) -> None:
        self._values[context_id] = value
        self._values.move_to_end(context_id)
        while len(self._values) > self.limit:
            self._values.popitem(last=False)

    def __len__(self) -> int:
        return len(self._values)
