"""RedisEventBus: task records and cancel requests shared by replicas through one Redis stream."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar

from redis.asyncio import Redis
from redis.exceptions import RedisError

from accord.core.records import EventRecord
from accord.errors import A2AError
from accord.runtime.bus import EventBus
from accord.types import JSONRPCError, adapters, new_id

log = logging.getLogger("accord.bus")

_RECORD, _FAILURE, _CANCEL = b"r", b"e", b"c"


class RedisEventBus(EventBus):
    """Every replica appends to, and reads from, one capped Redis stream.

    Local subscribers get a record the moment it is published; the stream carries it to
    the other replicas, whose single reader hands it to their subscribers. A replica skips
    its own entries. The stream is a live channel, not the event log: replay comes from
    the task store, so the stream is trimmed to about `max_length` entries.
    """

    distributed: ClassVar[bool] = True

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
        self.replica_id = new_id()
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

    async def publish(self, record: EventRecord) -> None:
        self._deliver_locally(record)
        if record.error is not None:
            fields = {
                b"k": _FAILURE,
                b"c": str(record.error.code).encode(),
                b"m": record.error.message.encode(),
            }
        else:
            fields = {
                b"k": _RECORD,
                b"s": str(record.seq).encode(),
                b"f": b"1" if record.final else b"0",
                b"p": record.payload,
            }
        await self._append({**fields, b"t": record.task_id.encode()})

    async def check(self) -> None:
        await self._connected().ping()

    async def request_cancel(self, task_id: str) -> None:
        await self._append({b"k": _CANCEL, b"t": task_id.encode()})

    async def _append(self, fields: dict[bytes, bytes]) -> None:
        redis = self._connected()
        fields[b"o"] = self.replica_id.encode()
        try:
            await redis.xadd(self.stream, fields, maxlen=self.max_length, approximate=True)  # type: ignore[arg-type]
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
                    if fields.get(b"o") != self.replica_id.encode():
                        await self._dispatch(fields)

    async def _dispatch(self, fields: dict[bytes, bytes]) -> None:
        kind = fields.get(b"k")
        task_id = fields[b"t"].decode()
        try:
            if kind == _CANCEL:
                await super().request_cancel(task_id)
            elif kind == _FAILURE:
                error = JSONRPCError(code=int(fields[b"c"]), message=fields[b"m"].decode())
                self._deliver_locally(
                    EventRecord.failure(task_id, A2AError.from_error_object(error))
                )
            elif task_id in self._subscribers:
                payload = fields[b"p"]
                self._deliver_locally(
                    EventRecord(
                        task_id, int(fields[b"s"]), adapters.STREAM_EVENT.validate_json(payload),
                        fields[b"f"] == b"1", payload,
                    )
                )  # fmt: skip
        except Exception:
            log.exception("dropping a malformed entry of %s for task %s", self.stream, task_id)

    def _connected(self) -> Redis:
        if self._redis is None:
            raise RuntimeError("RedisEventBus.start() has not been called")
        return self._redis
