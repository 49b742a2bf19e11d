"""SocketEventBus: replicas on one machine sharing records through a hub on a Unix socket."""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import ClassVar

from accord.runtime.shared_bus import Entry, SharedEventBus

log = logging.getLogger("accord.bus")

_LENGTH = struct.Struct(">I")
MAX_FRAME_BYTES = 64 * 1024 * 1024
"""The largest entry a frame carries: a record's payload is at most a request body's size."""


def encode_frame(entry: Entry) -> bytes:
    """An entry as one frame: its length, then each field as key length, key, value length,
    value."""
    parts: list[bytes] = []
    for key, value in entry.items():
        parts += (bytes((len(key),)), key, _LENGTH.pack(len(value)), value)
    body = b"".join(parts)
    return _LENGTH.pack(len(body)) + body


def decode_frame(body: bytes) -> Entry:
    """The entry a frame's body holds (the body without its length prefix)."""
    entry: Entry = {}
    at = 0
    while at < len(body):
        key_end = at + 1 + body[at]
        key = body[at + 1 : key_end]
        (size,) = _LENGTH.unpack_from(body, key_end)
        value_start = key_end + _LENGTH.size
        entry[key] = body[value_start : value_start + size]
        at = value_start + size
    return entry


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    """The next frame's body; IncompleteReadError at the end of the stream, ValueError for a
    frame larger than any entry."""
    return await reader.readexactly(_body_size(await reader.readexactly(_LENGTH.size)))


async def read_whole_frame(reader: asyncio.StreamReader) -> bytes:
    """The next frame as it travels, its length prefix included (the hub passes it on as it
    is); the errors of `read_frame`."""
    prefix = await reader.readexactly(_LENGTH.size)
    return prefix + await reader.readexactly(_body_size(prefix))


def _body_size(prefix: bytes) -> int:
    """The size of the body a frame's length prefix announces; ValueError past any entry's."""
    (size,) = _LENGTH.unpack(prefix)
    if size > MAX_FRAME_BYTES:
        raise ValueError(f"a bus frame of {size} bytes")
    return int(size)


class SocketEventBus(SharedEventBus):
    """A replica's link to the hub (`accord.runtime.socket_hub`) that the workers of one
    `accord serve --workers N` share: each entry sent goes to every other worker.

    The hub keeps nothing: a worker that loses it (the hub restarted) may have missed records,
    so its subscribers' streams end as if they had fallen behind, to resume from the task's
    log with the last event they read, and it connects again.
    """

    system: ClassVar[str] = "socket"

    def __init__(self, path: str, *, connect_timeout: float = 10.0) -> None:
        super().__init__()
        self.path = path
        self.connect_timeout = connect_timeout
        self._writer: asyncio.StreamWriter | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closing = False

    async def start(self) -> None:
        self._closing = False
        async with asyncio.timeout(self.connect_timeout):
            reader = await self._connect()
        self._reader = asyncio.create_task(self._read(reader), name="accord-socket-bus")

    async def close(self) -> None:
        self._closing = True
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
            self._reader = None
        self._disconnect()

    async def check(self) -> None:
        if self._writer is None:
            raise ConnectionError(f"not connected to the workers' bus hub at {self.path}")

    async def _send(self, entry: Entry) -> None:
        writer = self._writer
        if writer is None:
            log.warning("the bus hub is not connected; other workers miss this entry")
            return
        writer.write(encode_frame(entry))
        if writer.transport.get_write_buffer_size() > MAX_FRAME_BYTES:
            await writer.drain()  # the hub reads slower than this worker writes: wait for it

    async def _connect(self) -> asyncio.StreamReader:
        """Connect to the hub, trying again until it answers."""
        delay = 0.05
        while True:
            try:
                reader, self._writer = await asyncio.open_unix_connection(
                    self.path, limit=MAX_FRAME_BYTES
                )
                return reader
            except OSError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while not self._closing:
            try:
                await self._receive(decode_frame(await read_frame(reader)))
                continue
            except (asyncio.IncompleteReadError, OSError, ValueError) as exc:
                log.warning("lost the bus hub at %s (%s); connecting again", self.path, exc)
            self._disconnect()
            self._interrupt_subscribers()
            reader = await self._connect()

    def _disconnect(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
