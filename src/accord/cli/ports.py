"""Before serving: is the port free, and if not, which process holds it (Linux's /proc)."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

from accord.cli.errors import fail

_LISTEN = "0A"  # TCP state LISTEN in /proc/net/tcp


def ensure_free(host: str, port: int, option: str = "--port") -> None:
    """Return if `host:port` can be listened on; otherwise end with one line saying who holds it."""
    exc = bind_error(host, port)
    if exc is None:
        return
    if exc.errno == errno.EADDRINUSE:
        holder = listener_of(port)
        by = f" by {holder}" if holder else ""
        fail(
            f"error: port {port} on {host} is already in use{by}; stop that"
            f" or choose another port with {option}"
        )
    fail(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}")


def bind_error(host: str, port: int) -> OSError | None:
    """Why `host:port` cannot be listened on, or None when it can.

    Binds the way uvicorn does (SO_REUSEADDR), so a port left in TIME_WAIT counts as free.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc
    return None


def listener_of(port: int) -> str | None:
    """`pid N (command line)` of the process listening on TCP `port`, when this machine says."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    for process in Path("/proc").iterdir():
        if not process.name.isdigit():
            continue
        try:
            links = {os.readlink(fd) for fd in (process / "fd").iterdir()}
        except OSError:
            continue  # another user's process, or gone
        if any(f"socket:[{inode}]" in links for inode in inodes):
            command = _command_line(process)
            return f"pid {process.name} ({command})" if command else f"pid {process.name}"
    return "another process"


def _listening_inodes(port: int) -> set[str]:
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == _LISTEN and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(inode)
    return inodes


def _command_line(process: Path) -> str:
    try:
        raw = (process / "cmdline").read_bytes()
    except OSError:
        return ""
    return " ".join(arg.decode(errors="replace") for arg in raw.split(b"\0") if arg)
