"""BodyBudget: bounds the memory that the request bodies being served take together."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from accord.errors import ServerBusy

DEFAULT_BODY_BUDGET: Final = 32 * 1024 * 1024
_RESERVED: Final = "accord.body_reserved"
_FREE_FOR_ALL: Final = 64 * 1024
"""Bodies this small are not counted: they cost less than the bookkeeping."""


class BodyBudget:
    """At most `max_bytes` of request bodies are read and served at once.

    A binding reserves each body's size (`reserve`) as it reads it; a request that does not
    fit waits up to `wait` seconds for others to finish, then is refused with ServerBusy.
    What a request reserved is given back when its response starts sending its body (by
    then its body has been parsed, served and its answer encoded), or when it ends; the
    budget's `middleware` does that for every request of an app.
    """

    def __init__(self, max_bytes: int = DEFAULT_BODY_BUDGET, *, wait: float = 5.0) -> None:
        self.max_bytes = max_bytes
        self.wait = wait
        self.available = max_bytes
        self._freed = asyncio.Condition()

    @staticmethod
    def counts(size: int) -> bool:
        """Whether a body of `size` bytes takes room in the budget (`reserve` does nothing
        for one that does not: callers skip awaiting it)."""
        return size > _FREE_FOR_ALL

    async def reserve(self, scope: Scope, size: int) -> None:
        """Hold room for this request's body of `size` bytes in all (what the request holds
        already counts), waiting for it if need be."""
        held = scope.get(_RESERVED, 0)
        wanted = min(size, self.max_bytes) - held if self.counts(size) else 0
        if wanted <= 0:
            return
        if wanted > self.available:
            async with self._freed:
                try:
                    await asyncio.wait_for(
                        self._freed.wait_for(lambda: wanted <= self.available), self.wait
                    )
                except TimeoutError:
                    raise ServerBusy(
                        "the server is busy reading other large requests; retry shortly",
                        retry_after=1.0,
                    ) from None
        self.available -= wanted
        scope[_RESERVED] = held + wanted

    async def release(self, scope: Scope) -> None:
        """Give back what the request reserved (once)."""
        held = scope.pop(_RESERVED, 0)
        if held:
            self.available += held
            async with self._freed:
                self._freed.notify_all()

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """`app`, giving back each request's reservation once its response body starts."""

        async def budgeted(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return

            # A plain function handing back `send`'s own awaitable: no coroutine of its own
            # per message when (as for most requests) nothing is held.
            def sending(message: Message) -> Awaitable[None]:
                if _RESERVED in scope and message["type"] == "http.response.body":
                    return self._released(scope, send, message)
                return send(message)

            try:
                await app(scope, receive, sending)
            finally:
                if _RESERVED in scope:
                    await self.release(scope)

        return budgeted

    async def _released(self, scope: Scope, send: Send, message: Message) -> None:
        """Release what the request holds, then send `message`."""
        await self.release(scope)
        await send(message)
