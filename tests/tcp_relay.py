"""A TCP relay to a real service that a test can cut: the service looks unreachable, unharmed."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType


class TcpRelay:
    """Listens on a free loopback port and relays each connection to `host:port` until
    `cut()`, which closes the port and every relayed connection (as a service that went away
    would look to its clients)."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="tcp-relay", daemon=True).start()

    def cut(self) -> None:
        """Close the port and drop every connection made through it."""
        with self._lock:
            # Closing alone leaves a socket that a thread waits in accept() on listening.
            for sock in (self._listener, *self._sockets):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._sockets.clear()

    def __enter__(self) -> TcpRelay:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cut()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # cut
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
