"""CorkedTransport: what a connection writes in one turn of the event loop goes out as one."""

from __future__ import annotations

import asyncio
from typing import Any

HELD_BYTES = 64 * 1024
"""Held writes past this size go out at once: a large body is not copied to join it."""


class CorkedTransport:
    """A transport that holds its writes until the event loop's turn ends, then sends them in
    one system call: uvicorn writes a response's head and its body apart, two sends and two
    TCP segments for every response, and a stream's events written in one turn one each.

    Everything but writing and ending the connection goes to the transport it wraps; closing
    and `write_eof` send what is held first, `abort` drops it. Once the connection's end is
    written, later writes (a pipelined request's answer after a refusal, say) are dropped:
    the transport would raise on them, in a callback nobody could catch.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []
        self._held_bytes = 0
        self._ended = False

    def write(self, data: bytes) -> None:
        if self._ended:
            return
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(data)
        self._held_bytes += len(data)
        if self._held_bytes >= HELD_BYTES:
            self.flush()

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def flush(self) -> None:
        """Send what is held now."""
        if not self._held:
            return
        held, self._held, self._held_bytes = self._held, [], 0
        if not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + self._held_bytes

    def write_eof(self) -> None:
        self._end()
        self._transport.write_eof()

    def close(self) -> None:
        self._end()
        self._transport.close()

    def abort(self) -> None:
        self._ended = True
        self._held, self._held_bytes = [], 0
        self._transport.abort()

    def _end(self) -> None:
        """Send what is held, then take no more writes."""
        self.flush()
        self._ended = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
