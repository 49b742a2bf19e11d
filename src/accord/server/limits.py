"""Abuse limits as pipeline hooks: requests per second, open streams and running tasks per
caller, and how long a request may take; `Limits` bundles them with safe defaults."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Protocol

from accord.core import Inbound, Principal
from accord.core.records import EventRecord, close_stream
from accord.errors import RateLimited, RequestTimedOut, Unauthenticated
from accord.server.operation_names import MESSAGE_OPERATIONS, operation_of
from accord.server.pipeline import Authenticator, Call, Hook, Proceed

MAX_CALLERS = 100_000
"""How many callers a limit remembers; the least recently seen are forgotten first."""


def caller_of(call: Call) -> str:
    """Whom a limit counts a call against: the authenticated principal (its owner: callers of
    two schemes with one id are two callers), else the client's address (anonymous callers
    are told apart by where they connect from)."""
    principal = call.context.principal
    if principal.authenticated:
        return f"principal:{principal.owner}"
    return address_of(call.inbound)


def address_of(inbound: Inbound) -> str:
    """The client's address without its port, as a limit's caller key."""
    peer = inbound.peer or "unknown"
    return "peer:" + peer.rpartition(":")[0] if ":" in peer else "peer:" + peer


class RateLimit:
    """At most `per_second` requests per caller on average, `burst` at once (a token bucket
    per caller); a request over it is refused with RateLimited saying when to retry."""

    def __init__(self, per_second: float, burst: int | None = None) -> None:
        if per_second <= 0:
            raise ValueError("per_second must be positive")
        self.per_second = per_second
        self.burst = float(burst if burst is not None else max(1, round(2 * per_second)))
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    async def __call__(self, call: Call, proceed: Proceed) -> Any:
        self.take(caller_of(call))
        return await proceed()

    def take(self, caller: str, now: float | None = None) -> None:
        """Spend one token of `caller`'s bucket, or raise RateLimited."""
        now = time.monotonic() if now is None else now
        tokens = self._tokens(caller, now)
        if tokens < 1:
            self._remember(caller, tokens, now)
            wait = (1 - tokens) / self.per_second
            raise RateLimited(
                f"too many requests: at most {self.per_second:g} per second; retry in {wait:.2f} s",
                retry_after=wait,
            )
        self._remember(caller, tokens - 1, now)

    def exhausted(self, caller: str) -> bool:
        """Whether `caller` has no token left (nothing is spent)."""
        now = time.monotonic()
        tokens = self._tokens(caller, now)
        self._remember(caller, tokens, now)
        return tokens < 1

    def _tokens(self, caller: str, now: float) -> float:
        """The tokens `caller` has now (its bucket taken out of the LRU order)."""
        tokens, then = self._buckets.pop(caller, (self.burst, now))
        return min(self.burst, tokens + (now - then) * self.per_second)

    def _remember(self, caller: str, tokens: float, now: float) -> None:
        self._buckets[caller] = (tokens, now)
        while len(self._buckets) > MAX_CALLERS:
            self._buckets.popitem(last=False)


class StreamLimit:
    """At most `per_caller` streams open at once per caller (message streams and
    subscriptions); one more is refused with RateLimited until another ends."""

    def __init__(self, per_caller: int) -> None:
        if per_caller < 1:
            raise ValueError("per_caller must be at least 1")
        self.per_caller = per_caller
        self._open: dict[str, int] = {}

    async def __call__(self, call: Call, proceed: Proceed) -> Any:
        if not call.target.method.streaming:
            return await proceed()
        caller = caller_of(call)
        if self._open.get(caller, 0) >= self.per_caller:
            raise RateLimited(
                f"too many open streams: at most {self.per_caller} per caller; close one or"
                " retry later",
                retry_after=1.0,
            )
        self._open[caller] = self._open.get(caller, 0) + 1
        try:
            records = await proceed()
        except BaseException:
            self._release(caller)
            raise
        return _Counted(records, lambda: self._release(caller))

    def open_streams(self, caller: str) -> int:
        return self._open.get(caller, 0)

    def _release(self, caller: str) -> None:
        left = self._open.get(caller, 0) - 1
        if left > 0:
            self._open[caller] = left
        else:
            self._open.pop(caller, None)


class _Counted(AsyncIterator[EventRecord]):
    """A stream's records that call `release` once, when the stream ends or is closed
    (whether or not anyone started reading it)."""

    def __init__(self, records: AsyncIterator[EventRecord], release: Callable[[], None]) -> None:
        self._records = records
        self._release: Callable[[], None] | None = release

    async def __anext__(self) -> EventRecord:
        try:
            return await anext(self._records)
        except StopAsyncIteration:
            self._done()
            raise

    async def aclose(self) -> None:
        self._done()
        await close_stream(self._records)

    def _done(self) -> None:
        release = self._release
        if release is not None:
            self._release = None
            release()


class FailedAuthenticationLimit:
    """An Authenticator that slows down guessing: each request it refuses (Unauthenticated)
    spends a token of the client address's bucket (`per_second`, bursts of `burst`); an address
    with none left is refused with RateLimited before its credentials are even checked."""

    def __init__(
        self, authenticator: Authenticator, per_second: float, burst: int | None = None
    ) -> None:
        self.authenticator = authenticator
        self.failures = RateLimit(per_second, burst)

    async def authenticate(self, inbound: Inbound) -> Principal:
        address = address_of(inbound)
        if self.failures.exhausted(address):
            raise RateLimited(
                "too many failed authentications from this address; retry later",
                retry_after=1 / self.failures.per_second,
            )
        try:
            return await self.authenticator.authenticate(inbound)
        except Unauthenticated:
            with suppress(RateLimited):
                self.failures.take(address)
            raise


class RunningTasks(Protocol):
    """Who counts the tasks running for a principal (the TaskRuntime)."""

    def running_for(self, owner: str) -> int: ...


class ActiveTaskLimit:
    """At most `per_caller` tasks at work at once for one principal (anonymous callers share
    one count): a message that would start one more is refused with RateLimited."""

    def __init__(self, per_caller: int, tasks: RunningTasks) -> None:
        if per_caller < 1:
            raise ValueError("per_caller must be at least 1")
        self.per_caller = per_caller
        self.tasks = tasks

    async def __call__(self, call: Call, proceed: Proceed) -> Any:
        if operation_of(call) in MESSAGE_OPERATIONS:
            principal = call.context.principal
            if self.tasks.running_for(principal.owner) >= self.per_caller:
                raise RateLimited(
                    f"too many tasks at work: at most {self.per_caller} per caller; wait for one"
                    " to finish or cancel one",
                    retry_after=5.0,
                )
        return await proceed()


class RequestTimeout:
    """A request that does not answer within `seconds` is refused with RequestTimedOut
    (a task it started goes on); streams are not limited, only their opening."""

    def __init__(self, seconds: float) -> None:
        if seconds <= 0:
            raise ValueError("seconds must be positive")
        self.seconds = seconds

    async def __call__(self, call: Call, proceed: Proceed) -> Any:
        try:
            async with asyncio.timeout(self.seconds):
                return await proceed()
        except TimeoutError:
            raise RequestTimedOut(
                f"no answer within {self.seconds:g} s; for long tasks send without blocking"
                " and follow the task (get or subscribe)"
            ) from None


@dataclass(frozen=True, slots=True)
class Limits:
    """The abuse limits of a server, each None to turn it off. The defaults apply to agents
    that declare security (`accord.auth.Security`) and to `accord serve`: per caller, 50
    requests a second (bursts of 100), 32 open streams, 32 tasks at work; 300 s per request;
    5 refused authentications a second per client address (bursts of 10).
    The body size limit is `create_app(max_body_bytes=...)` (10 MiB)."""

    requests_per_second: float | None = 50.0
    burst: int | None = None
    streams_per_caller: int | None = 32
    tasks_per_caller: int | None = 32
    request_timeout: float | None = 300.0
    failed_authentications_per_second: float | None = 5.0
    """Refused authentications per client address (bursts of twice as many)."""

    def hooks(self, tasks: RunningTasks) -> list[Hook]:
        """The hooks enforcing these limits (`tasks` counts running tasks)."""
        hooks: list[Hook] = []
        if self.requests_per_second is not None:
            hooks.append(RateLimit(self.requests_per_second, self.burst))
        if self.streams_per_caller is not None:
            hooks.append(StreamLimit(self.streams_per_caller))
        if self.tasks_per_caller is not None:
            hooks.append(ActiveTaskLimit(self.tasks_per_caller, tasks))
        if self.request_timeout is not None:
            hooks.append(RequestTimeout(self.request_timeout))
        return hooks

    def guarded(self, authenticator: Authenticator) -> Authenticator:
        """`authenticator`, slowed down for addresses that keep failing it."""
        per_second = self.failed_authentications_per_second
        if per_second is None:
            return authenticator
        return FailedAuthenticationLimit(authenticator, per_second)


NO_LIMITS = Limits(None, None, None, None, None, None)
"""Turn every limit off (a server behind a gateway that limits callers itself)."""
