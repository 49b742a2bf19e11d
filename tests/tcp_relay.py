"""A TCP relay to a real service that a test can cut: the service looks unreachable, unharmed."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType


class TcpRelay:
    """Listens on a free loopback port and relays each connection to `host:port` until
    `cut()`, which closes the port and every relayed connection (as a service that went away
    would look to its clients), or after `restore()` again."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listen(0)
        self.port: int = self._listener.getsockname()[1]

    def restore(self) -> None:
        """Listen again on the same port after `cut()` (the service is back); else nothing."""
        if self._listener.fileno() == -1:
            self._listen(self.port)

    def _listen(self, port: int) -> None:
        self._listener = socket.create_server(("127.0.0.1", port))
        threading.Thread(
            target=self._accept, args=(self._listener,), name="tcp-relay", daemon=True
        ).start()

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

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                if listener.fileno() == -1:  # cut while this one connected: dropped too
                    client.close()
                    upstream.close()
                    return
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
