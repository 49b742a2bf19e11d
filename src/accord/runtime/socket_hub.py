"""The hub of `SocketEventBus`: every frame a worker sends, passed on to the other workers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

from accord.runtime.socket_bus import MAX_FRAME_BYTES, read_whole_frame

log = logging.getLogger("accord.bus")


class Hub:
    """Relays frames between the workers connected to a Unix socket, without reading them.

    A worker whose connection holds more than `MAX_FRAME_BYTES` unsent (it stopped reading)
    is disconnected rather than let the hub's memory grow: it connects again and its
    subscribers resume from the task log.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._workers: set[asyncio.StreamWriter] = set()

    async def serve(self) -> None:
        """Relay between the workers that connect until cancelled."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        server = await asyncio.start_unix_server(self._relay, self.path, limit=MAX_FRAME_BYTES)
        os.chmod(self.path, 0o600)
        try:
            async with server:
                await server.serve_forever()
        finally:  # stopped: let go of the workers too, which then connect again
            for writer in list(self._workers):
                writer.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._workers.add(writer)
        try:
            while True:
                relayed = await read_whole_frame(reader)
                for other in list(self._workers):
                    if other is writer:
                        continue
                    if other.transport.get_write_buffer_size() > MAX_FRAME_BYTES:
                        log.warning("a worker stopped reading the bus; disconnecting it")
                        self._workers.discard(other)
                        other.close()
                        continue
                    other.write(relayed)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass  # the worker went away (or sent garbage): forget it
        finally:
            self._workers.discard(writer)
            writer.close()


def run_hub(path: str) -> None:
    """Serve a hub at `path` until the process is told to stop."""
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(Hub(path).serve())
