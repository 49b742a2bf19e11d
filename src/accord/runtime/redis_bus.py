"""RedisEventBus: task records and cancel requests shared by replicas through one Redis stream."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from accord.runtime.shared_bus import Entry, SharedEventBus

log = logging.getLogger("accord.bus")


class RedisEventBus(SharedEventBus):
    """Every replica appends to, and reads from, one capped Redis stream.

    The stream is a live channel, not the event log: replay comes from the task store, so
    the stream is trimmed to about `max_length` entries. Every replica reads the whole
    stream and skips its own entries.
    """

    def __init__(
        self,
        url: str,
        *,
        stream: str = "accord:events",
        max_length: int = 100_000,
        block_ms: int = 250,
    ) -> None:
        super().__init__()
        self.url = url
        self.stream = stream
        self.max_length = max_length
        self.block_ms = block_ms
        self._redis: Redis | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closing = False

    async def start(self) -> None:
        self._redis = Redis.from_url(self.url)
        self._closing = False
        # Read from the current end: what was published before this replica existed is
        # history, served by the store.
        info: Any = await self._redis.xrevrange(self.stream, count=1)
        last_id = info[0][0] if info else b"0-0"
        self._reader = asyncio.create_task(self._read(last_id), name="accord-redis-bus")

    async def close(self) -> None:
        if self._reader is not None:
            # Cancelling a blocked XREAD can wedge redis-py's connection: let the reader
            # see the flag when its block times out instead, and cancel only as a last resort.
            self._closing = True
            done, _ = await asyncio.wait({self._reader}, timeout=self.block_ms / 1000 + 1)
            if not done:
                self._reader.cancel()
                await asyncio.wait({self._reader}, timeout=1)
            self._reader = None
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def _send(self, entry: Entry) -> None:
        redis = self._connected()
        try:
            await redis.xadd(self.stream, entry, maxlen=self.max_length, approximate=True)  # type: ignore[arg-type]
        except RedisError:
            log.exception("could not publish to %s; other replicas miss this entry", self.stream)

    async def _read(self, last_id: bytes) -> None:
        redis = self._connected()
        backoff = 0.1
        while not self._closing:
            try:
                batches: Any = await redis.xread(
                    {self.stream: last_id}, block=self.block_ms, count=500
                )
                backoff = 0.1
            except RedisError:
                log.exception("reading %s failed; retrying in %.1fs", self.stream, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            for _stream, entries in batches or ():
                for entry_id, fields in entries:
                    last_id = entry_id
                    await self._receive(fields)

    def _connected(self) -> Redis:
        if self._redis is None:
            raise RuntimeError("RedisEventBus.start() has not been called")
        return self._redis
