"""`accord serve --workers N`: N server processes on one port, watched and restarted."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event as EventType
from typing import TYPE_CHECKING, Any

import typer
import uvicorn

from accord.cli.errors import BadArgument
from accord.runtime.bus_factory import MEMORY
from accord.runtime.socket_hub import run_hub

if TYPE_CHECKING:
    from accord.cli.serve import ServeSettings

log = logging.getLogger("accord.workers")

AppFactory = Callable[[str | None, int], Any]
"""Makes the app of the worker numbered by the second argument, on the bus at the URL given
(None: the one the settings name)."""

_FORK = multiprocessing.get_context("fork")
_PR_SET_PDEATHSIG = 1


def worker_count(text: str) -> int:
    """`auto` (the cores this process may run on) or a number of at least 1."""
    if text.strip().lower() == "auto":
        return len(os.sched_getaffinity(0))
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise BadArgument(f"--workers must be a number of at least 1, or auto; got {text!r}")
    return count


def run_workers(
    make_app: AppFactory,
    settings: ServeSettings,
    server_options: dict[str, Any],
    announce: Callable[[], None],
) -> None:
    """Serve on `settings.workers` processes sharing one listening socket until SIGINT or
    SIGTERM, which each worker gets once to finish as a single server would; `announce`
    says so once the socket listens.

    Unless the settings name a bus of their own (Redis), the workers share their events
    through a hub on a Unix socket in a private folder: a stream, a resubscribe or a cancel
    works whichever worker a request reaches. A worker that dies is started again; its tasks
    are taken over by the others once its runner TTL passes, as a replica's are.
    """
    listener = _listen(settings.host, settings.port)
    announce()  # once the port listens: a client may connect now, accepted when a worker is up
    folder = tempfile.mkdtemp(prefix="accord-workers-")
    hub_path = os.path.join(folder, "bus.sock")
    bus_url = f"local://{hub_path}" if settings.bus_url == MEMORY else None

    def start_worker(index: int) -> Worker:
        options = {"host": settings.host, "port": settings.port, **server_options}
        ready = _FORK.Event()
        process = _FORK.Process(
            target=_serve_worker,
            args=(make_app, bus_url, index, listener, options, ready),
            name=f"accord-worker-{index}",
        )
        process.start()
        return Worker(process, ready)

    def start_hub() -> BaseProcess:
        process = _FORK.Process(target=_run_hub, args=(hub_path, listener), name="accord-bus-hub")
        process.start()
        return process

    supervisor = Supervisor(
        settings.workers,
        start_worker,
        start_hub if bus_url is not None else None,
        settings.graceful_timeout,
    )
    try:
        code = supervisor.run()
    finally:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
    if code:
        raise typer.Exit(code)


@dataclass(frozen=True, slots=True)
class Worker:
    """A worker's process, and whether it has started serving."""

    process: BaseProcess
    ready: EventType


class Supervisor:
    """Starts the workers (and the hub they share), starts a worker again when one dies, and
    stops them all on SIGINT or SIGTERM."""

    def __init__(
        self,
        count: int,
        start_worker: Callable[[int], Worker],
        start_hub: Callable[[], BaseProcess] | None,
        graceful_timeout: float,
    ) -> None:
        self.count = count
        self.start_worker = start_worker
        self.start_hub = start_hub
        self.graceful_timeout = graceful_timeout
        self._stopping = False

    def run(self) -> int:
        """Supervise until told to stop; the exit status (1: a worker ended before it served,
        so it is not started again and again)."""
        previous = {sig: signal.signal(sig, self._stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        hub = self.start_hub() if self.start_hub is not None else None
        workers: dict[int, Worker] = {}
        try:
            for index in range(self.count):
                workers[index] = self.start_worker(index)
            while not self._stopping:
                watched = [worker.process.sentinel for worker in workers.values()]
                wait([*watched, *([hub.sentinel] if hub else [])], timeout=0.5)
                if self._stopping:
                    break
                if hub is not None and not hub.is_alive():
                    typer.echo("accord: the workers' bus hub stopped; starting it again", err=True)
                    hub = self.start_hub() if self.start_hub is not None else None
                for index, worker in list(workers.items()):
                    process = worker.process
                    if process.is_alive():
                        continue
                    code = process.exitcode
                    if not worker.ready.is_set():
                        typer.echo(
                            f"accord: worker {index} (pid {process.pid}) failed to start"
                            f" (exit status {code}); stopping",
                            err=True,
                        )
                        return 1
                    typer.echo(
                        f"accord: worker {index} (pid {process.pid}) ended (exit status {code});"
                        " starting another",
                        err=True,
                    )
                    workers[index] = self.start_worker(index)
            return 0
        finally:
            self._stop_all([worker.process for worker in workers.values()], hub)
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _stop(self, signum: int, frame: object) -> None:
        self._stopping = True

    def _stop_all(self, workers: list[BaseProcess], hub: BaseProcess | None) -> None:
        """SIGTERM to every worker, a graceful shutdown's time to finish, then SIGKILL; the hub
        last, once no worker needs it."""
        for process in workers:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.graceful_timeout + 5
        for process in workers:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
        if hub is not None:
            hub.terminate()
            hub.join(5)


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket every worker accepts on, bound before any starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        listener = socket.create_server((host.strip("[]"), port), family=family, backlog=2048)
    except OSError as exc:
        raise BadArgument(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    listener.set_inheritable(True)
    return listener


def _detach() -> None:
    """In a new process: leave the terminal's process group (Ctrl-C reaches the supervisor,
    which stops each worker once) and die with the supervisor, however it ends."""
    os.setpgid(0, 0)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class _WorkerServer(uvicorn.Server):
    """uvicorn's server, which says when it has started serving."""

    def __init__(self, config: uvicorn.Config, ready: EventType) -> None:
        super().__init__(config)
        self.ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.ready.set()


def _serve_worker(
    make_app: AppFactory,
    bus_url: str | None,
    index: int,
    listener: socket.socket,
    options: dict[str, Any],
    ready: EventType,
) -> None:
    _detach()
    try:
        app = make_app(bus_url, index)
    except BadArgument as exc:
        typer.echo(f"accord: {exc}", err=True)
        raise SystemExit(1) from None
    _WorkerServer(uvicorn.Config(app, **options), ready).run(sockets=[listener])


def _run_hub(path: str, listener: socket.socket) -> None:
    _detach()
    listener.close()  # the workers' port: the hub serves none
    run_hub(path)
