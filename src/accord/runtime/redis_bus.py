"""RedisEventBus: task records and cancel requests shared by replicas, a Redis stream per task."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from redis.asyncio import Redis
from redis.exceptions import RedisError
from redis.typing import KeyT, StreamIdT

from accord.runtime.bus import Subscription
from accord.runtime.shared_bus import Entry, SharedEventBus, is_cancel_request

log = logging.getLogger("accord.bus")

CLOCK_MARGIN_MS = 5_000
"""How far before the moment a replica starts watching a task it reads the task's stream
from: room for the clocks of this machine and of Redis (which numbers the entries) to differ.
What this reads again is harmless: a stream skips records it has seen (by their number), and
a cancel request acts only on a task that runs here."""


class RedisEventBus(SharedEventBus):
    """Each task has two Redis streams: `{stream}:{task_id}` for its records and
    `{stream}:{task_id}:cancel` for requests to cancel it. A replica reads the records of a
    task only while it has a subscriber for it (a stream, a blocking send) and does not run
    it (what it runs it publishes itself), and the cancel requests of the tasks it runs. So a
    replica's bus work follows its own tasks and the streams it serves for others' tasks, not
    the size of the fleet; a client streaming from the replica that runs its task costs no
    bus read at all.

    The streams are a live channel, not the event log (replay comes from the task store):
    each keeps about the last `keep_seconds` of entries, and is gone that long after its last
    one, so Redis holds about `keep_seconds` of the fleet's traffic. A replica's own stream,
    `{stream}:replica:{id}`, only wakes its reader when what it reads changes: it keeps one
    entry and expires like the others.
    """

    system: ClassVar[str] = "redis"

    def __init__(
        self,
        url: str,
        *,
        stream: str = "accord:events",
        keep_seconds: int = 30,
        block_ms: int = 250,
    ) -> None:
        super().__init__()
        self.url = url
        self.stream = stream
        self.keep_seconds = keep_seconds
        self.block_ms = block_ms
        self._redis: Redis | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closing = False
        self._unreachable = False
        """Whether the last entry sent gave up: Redis is down, the next ones try once."""
        self._subscribed: Counter[str] = Counter()
        self._running: Counter[str] = Counter()
        self._positions: dict[str, bytes] = {}
        """The streams read, by key, and the last entry read of each."""
        self._wake_key = f"{stream}:replica:{self.replica_id}"
        self._waking: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._redis = Redis.from_url(self.url)
        self._closing = False
        self._reader = asyncio.create_task(self._read(), name="accord-redis-bus")

    async def close(self) -> None:
        if self._reader is not None:
            # Cancelling a blocked XREAD can wedge redis-py's connection: let the reader
            # see the flag when its block times out instead, and cancel only as a last resort.
            self._closing = True
            self._wake()
            done, _ = await asyncio.wait({self._reader}, timeout=self.block_ms / 1000 + 1)
            if not done:
                self._reader.cancel()
                await asyncio.wait({self._reader}, timeout=1)
            self._reader = None
        if self._redis is not None:
            await _quietly(self._redis.delete(self._wake_key), f"could not delete {self._wake_key}")
            await self._redis.aclose()
            self._redis = None

    def subscribe(self, task_id: str) -> Subscription:
        subscription = super().subscribe(task_id)
        self._subscribed[task_id] += 1
        self._follow(task_id)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscribers.get(subscription.task_id, ()):
            self._subscribed[subscription.task_id] -= 1
            self._follow(subscription.task_id)
        super()._unsubscribe(subscription)

    async def check(self) -> None:
        await self._connected().ping()

    @contextmanager
    def running(self, task_id: str) -> Iterator[None]:
        self._running[task_id] += 1
        self._follow(task_id)
        try:
            yield
        finally:
            self._running[task_id] -= 1
            self._follow(task_id)

    async def _send(self, entry: Entry) -> None:
        """Append `entry` to its stream, trying again for up to `keep_seconds` when Redis
        fails (it restarts, this replica was paused past a timeout): a client opened from a
        URL retries nothing itself, and a task's entries are sent one at a time, so one sent
        late is still in order. A record that never gets through reaches the followers on
        other replicas from the task's log (`SharedEventBus`); so once an entry gave up, the
        next ones try once until one gets through, rather than each holding its run up."""
        task_id = entry[b"t"].decode()
        key = self._cancels_of(task_id) if is_cancel_request(entry) else self._records_of(task_id)
        delay, deadline = 0.05, time.monotonic() + self.keep_seconds
        while True:
            try:
                await self._append(key, entry)
                self._unreachable = False
                return
            except RedisError as exc:
                error = exc
            if self._unreachable or time.monotonic() + delay > deadline:
                break
            log.warning("publishing to %s failed (%s); retrying in %.2fs", key, error, delay)
            await asyncio.sleep(delay)
            if self._closing:
                break
            delay = min(delay * 2, 2.0)
        self._unreachable = True
        log.error("could not publish to %s (%s); other replicas miss it", key, error)

    async def _append(self, key: str, entry: Entry) -> None:
        """XADD `entry` to the stream `key`, trimming entries older than `keep_seconds`, and
        have the stream expire `keep_seconds` after its last entry."""
        oldest = f"{int(time.time() * 1000) - self.keep_seconds * 1000}-0"
        async with self._connected().pipeline(transaction=False) as pipe:
            pipe.xadd(key, entry, minid=oldest, approximate=True)  # type: ignore[arg-type]
            pipe.expire(key, self.keep_seconds)
            await pipe.execute()

    def _records_of(self, task_id: str) -> str:
        return f"{self.stream}:{task_id}"

    def _cancels_of(self, task_id: str) -> str:
        return f"{self.stream}:{task_id}:cancel"

    def _follow(self, task_id: str) -> None:
        """Read the task's streams this replica needs now, from a little before now."""
        running = self._running[task_id] > 0
        subscribed = self._subscribed[task_id] > 0
        if not running:
            del self._running[task_id]
        if not subscribed:
            del self._subscribed[task_id]
        wanted = {self._records_of(task_id): subscribed and not running}
        wanted[self._cancels_of(task_id)] = running
        since = f"{int(time.time() * 1000) - CLOCK_MARGIN_MS}-0".encode()
        changed = False
        for key, read in wanted.items():
            if read and key not in self._positions:
                self._positions[key] = since
                changed = True
            elif not read:
                self._positions.pop(key, None)
        if changed:
            self._wake()

    def _wake(self) -> None:
        """Have the reader's blocked XREAD return, to read the streams it watches now."""
        if self._redis is None or self._reader is None:
            return
        waking = asyncio.create_task(
            _quietly(
                self._nudge(),
                "could not wake the bus reader; it reads the new streams within its block",
            )
        )
        self._waking.add(waking)
        waking.add_done_callback(self._waking.discard)

    async def _nudge(self) -> None:
        """Add the one entry the wake stream keeps; the stream is gone `keep_seconds` after
        the last, so a replica that died leaves nothing behind for long."""
        async with self._connected().pipeline(transaction=False) as pipe:
            pipe.xadd(self._wake_key, {b"k": b"w"}, maxlen=1, approximate=False)
            pipe.expire(self._wake_key, self.keep_seconds)
            await pipe.execute()

    async def _read(self) -> None:
        redis = self._connected()
        backoff = 0.1
        while not self._closing:
            streams: dict[KeyT, StreamIdT] = {key: at for key, at in self._positions.items()}
            streams[self._wake_key] = b"$"
            try:
                batches: Any = await redis.xread(streams, block=self.block_ms, count=500)
                backoff = 0.1
            except RedisError as exc:  # Redis restarting, or this process paused past a timeout
                log.warning("reading the bus failed (%s); retrying in %.1fs", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            for raw_key, entries in batches or ():
                key = raw_key.decode()
                if key not in self._positions:
                    continue  # a wake-up, or a stream no longer read
                self._positions[key] = entries[-1][0]
                for _entry_id, fields in entries:
                    await self._receive(fields)

    def _connected(self) -> Redis:
        if self._redis is None:
            raise RuntimeError("RedisEventBus.start() has not been called")
        return self._redis


async def _quietly(command: Any, failed: str) -> None:
    """Await `command`; if Redis cannot be reached, log `failed` and go on."""
    try:
        await command
    except RedisError as exc:
        log.warning("%s (%s)", failed, exc)
