"""Relays to a real service that a test can cut: the service looks unreachable, unharmed."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from types import TracebackType


class Relay:
    """Listens on an address of its own and relays each connection to the service until
    `cut()`, which closes the listener and every relayed connection (as a service that went
    away would look to its clients), or after `restore()` again."""

    def __init__(self) -> None:
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = self._listen()
        self._accept_in_background()

    def _listen(self) -> socket.socket:
        raise NotImplementedError

    def _connect(self) -> socket.socket:
        raise NotImplementedError

    def restore(self) -> None:
        """Listen again on the same address after `cut()` (the service is back); else nothing."""
        if self._listener.fileno() == -1:
            self._listener = self._listen()
            self._accept_in_background()

    def _accept_in_background(self) -> None:
        threading.Thread(
            target=self._accept, args=(self._listener,), name="relay", daemon=True
        ).start()

    def cut(self) -> None:
        """Close the listener and drop every connection made through it."""
        with self._lock:
            # Closing alone leaves a socket that a thread waits in accept() on listening.
            for sock in (self._listener, *self._sockets):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._sockets.clear()

    def __enter__(self) -> Relay:
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
                upstream = self._connect()
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


class TcpRelay(Relay):
    """A relay on a free loopback port (`port`, kept across cuts) to `host:port`."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        super().__init__()
        self.port = self._listener.getsockname()[1]

    def _listen(self) -> socket.socket:
        return socket.create_server(("127.0.0.1", self.port))

    def _connect(self) -> socket.socket:
        return socket.create_connection(self.target)


class UnixRelay(Relay):
    """A relay listening at the Unix socket `path` to the one at `target`."""

    def __init__(self, target: str, path: str) -> None:
        self.target, self.path = target, path
        super().__init__()

    def _listen(self) -> socket.socket:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # left by the listener a cut closed
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        listener.listen()
        return listener

    def _connect(self) -> socket.socket:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(self.target)
        except OSError:
            upstream.close()
            raise
        return upstream


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
