"""`accord serve`: find an agent or ASGI app by `module:attribute` and run it with uvicorn."""

from __future__ import annotations

import ctypes
import gc
import importlib
import inspect
import os
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import typer
import uvicorn
from uvicorn.config import LOG_LEVELS

from accord.agents import Agent
from accord.cli import exposure
from accord.cli.errors import BadArgument, exit_on_errors
from accord.cli.observability_options import ObservabilitySettings, logging_options, observe
from accord.cli.ports import ensure_free
from accord.cli.signing_options import open_keys
from accord.cli.storage import (
    StoreSettings,
    display_url,
    earlier_default_note,
    pool_warning,
    prepare_store,
    shared_by_processes,
)
from accord.cli.workers import AppFactory, run_workers
from accord.runtime import DEFAULT_BUS_URL, open_bus
from accord.runtime.bus_factory import MEMORY
from accord.server.config import ServerConfig
from accord.server.http_limits import HttpLimits
from accord.store import open_store
from accord.web.allowed_hosts import AllowedHosts

CARD_PATH = "/.well-known/agent-card.json"


def load_app(target: str) -> Any:
    """The ASGI app named by `module:attribute`: an `accord.Agent`'s app, or an ASGI app."""
    found = find_target(target)
    return found.app() if isinstance(found, Agent) else found


def find_target(target: str) -> Any:
    """The `accord.Agent` or ASGI app named by `module:attribute`."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        example = "accord.samples.echo:agent"
        raise BadArgument(f"expected MODULE:ATTRIBUTE (like {example}), got {target!r}")
    module = _import(module_name)
    found: Any = module
    for name in attribute.split("."):
        if not hasattr(found, name):
            raise BadArgument(_missing_attribute(module, attribute))
        found = getattr(found, name)
    if isinstance(found, Agent) or _is_asgi_app(found):
        return found
    raise BadArgument(f"{target} is a {type(found).__name__}, not an accord.Agent or an ASGI app")


def _missing_attribute(module: ModuleType, attribute: str) -> str:
    where = f" ({module.__file__})" if module.__file__ else ""
    line = f"module {module.__name__!r}{where} has no attribute {attribute!r}"
    agents = [name for name, value in vars(module).items() if isinstance(value, Agent)]
    if agents:
        line += "; its agents: " + ", ".join(f"{module.__name__}:{name}" for name in agents)
    return line


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """How `accord serve` runs its server processes: the address, uvicorn's log level, the
    store, the bus, the shutdown grace, each connection's limits, the key store's directory
    (None: the config's keys, or a key made in memory) and how many workers."""

    host: str
    port: int
    log_level: str = "info"
    storage: StoreSettings = field(default_factory=StoreSettings)
    bus_url: str = DEFAULT_BUS_URL
    graceful_timeout: float = 10.0
    http_limits: HttpLimits = field(default_factory=HttpLimits)
    keys_dir: Path | None = None
    workers: int = 1
    """Server processes sharing the port, the store and (through a hub) their events."""
    observability: ObservabilitySettings = field(default_factory=ObservabilitySettings)


def run(target: str | Agent, settings: ServeSettings, config: ServerConfig | None = None) -> None:
    """Serve the agent or app named by `target` (or the agent `target` is) until interrupted
    (see `serve`)."""
    if settings.log_level not in LOG_LEVELS:
        levels = ", ".join(LOG_LEVELS)
        raise BadArgument(f"--log-level must be one of {levels}, got {settings.log_level!r}")
    found = find_target(target) if isinstance(target, str) else target
    serve(found, settings, config)


def serve_agent(
    agent: Agent,
    host: str,
    port: int,
    *,
    store: str | None,
    log_level: str,
    config: ServerConfig | None = None,
    workers: int = 1,
    options: Mapping[str, Any],
) -> None:
    """`Agent.serve`: `agent` on `host:port` (and `workers` processes) with the store at the
    URL `store` (None: its own default file), as `config` and `options` say (see
    `ServerConfig.of`), until interrupted; a failure is one line on stderr and exit status 1."""

    def start() -> None:
        try:
            served = ServerConfig.of(config, **options)
        except (TypeError, ValueError) as exc:  # a setting unknown or that cannot be
            raise BadArgument(str(exc)) from None
        if workers < 1:
            raise BadArgument(f"workers must be at least 1, got {workers}")
        settings = ServeSettings(host, port, log_level, StoreSettings(url=store), workers=workers)
        serve(agent, settings, served)

    exit_on_errors(start)


_AGENT_ONLY = ("grpc_port", "tls", "limits", "public_url", "allowed_hosts", "debug")
"""The settings that only an agent's server has: an ASGI app given one is refused."""


def serve(found: Any, settings: ServeSettings, config: ServerConfig | None = None) -> None:
    """Serve an `accord.Agent` or an ASGI app until interrupted; the ports are checked before
    the server starts, after the store and the bus. Every connection is held to
    `settings.http_limits`. With `settings.workers` above 1, that many processes share the
    port (`accord.cli.workers`).

    An agent gets the store and the bus `settings` name (the store's schema upgraded first),
    served as `config` says; it says on stderr where it is served and where its tasks are
    kept. An ASGI app is served as it is.
    """
    config = config if config is not None else ServerConfig()
    if isinstance(found, Agent):
        served = _ServedAgent.prepare(found, settings, config)
        make_app: AppFactory = served.app
        if settings.workers == 1:
            app = served.app()
        else:
            served.check()
        served.check_ports()
        announce = served.announce
    elif settings.storage.url is not None or settings.bus_url != DEFAULT_BUS_URL:
        raise BadArgument(
            "--store and --bus serve an accord.Agent, not an ASGI app, whose tasks are kept"
            " where it was made (create_app(agent, store=..., bus=...)); serve the agent"
            " (MODULE:AGENT) instead, or leave them out"
        )
    elif any(getattr(config, name) != getattr(_DEFAULTS, name) for name in _AGENT_ONLY):
        raise BadArgument(
            "--grpc-port, TLS, limits, --public-url and --allowed-host serve an accord.Agent,"
            " not an ASGI app"
        )
    elif settings.observability.agent_only():
        raise BadArgument(
            f"{settings.observability.agent_only()} serve an accord.Agent, not an ASGI app"
        )
    else:
        ensure_free(settings.host, settings.port)
        app = found

        def make_app(bus_url: str | None, worker: int | None = None) -> Any:
            return found

        def announce() -> None:
            """An ASGI app says nothing of itself."""

    _tune_gc()
    _tune_malloc()
    server_options = config.tls.uvicorn_options() if config.tls is not None else {}
    server_options |= settings.http_limits.uvicorn_options(server_options.get("http"))
    server_options |= {
        "log_level": settings.log_level,
        **logging_options(settings.observability, settings.log_level),
        "timeout_graceful_shutdown": int(settings.graceful_timeout) or 1,
    }
    if settings.workers > 1:
        run_workers(make_app, settings, server_options, announce)
        return
    announce()
    uvicorn.run(app, host=settings.host, port=settings.port, **server_options)


_DEFAULTS = ServerConfig()


@dataclass(slots=True)
class _ServedAgent:
    """An agent made ready to serve: its store's schema upgraded and bound to it, its config
    completed with the address, the Host names it answers and its keys, and what to say of
    it; `app` makes its app (once per worker), on a store and a bus of its own, observed as
    the settings ask."""

    agent: Agent
    settings: ServeSettings
    config: ServerConfig
    store_url: str
    hosts_line: str
    said: list[str] = field(default_factory=list)

    @classmethod
    def prepare(cls, agent: Agent, settings: ServeSettings, config: ServerConfig) -> _ServedAgent:
        host, port, storage = settings.host, settings.port, settings.storage
        store_agent = config.store_agent or agent.name
        store_url = storage.url_for(store_agent)
        if settings.workers > 1 and settings.observability.metrics:
            raise BadArgument(
                "--metrics serves one process's metrics on the agent's port: with --workers,"
                " give --metrics-port PORT (worker N serves its own at PORT+N)"
            )
        if settings.workers > 1 and not shared_by_processes(store_url):
            raise BadArgument(
                f"--workers {settings.workers} needs a store the workers share: the default"
                " SQLite file, sqlite:///PATH or postgresql://... (memory keeps each worker's"
                " tasks to itself)"
            )
        prepare_store(store_url, store_agent)
        open_bus(settings.bus_url)  # a bad --bus is said before serving
        hosts, hosts_line = _answered_hosts(host, port, config)
        keys = config.keys
        if keys is None and settings.keys_dir is not None:
            keys = open_keys(settings.keys_dir)
        config = replace(
            config,
            allowed_hosts=hosts,
            keys=keys,
            grpc_host=host,
            http_port=port,
            store_agent=store_agent,
        )
        return cls(agent, settings, config, store_url, hosts_line)

    def app(self, bus_url: str | None = None, worker: int | None = None) -> Any:
        """The agent's app, on a store and a bus (at `bus_url`, else the settings') of its own;
        a worker's (numbered `worker`) says itself what it observes, and serves its metrics
        on a port of its own (`--metrics-port` plus its number)."""
        storage = self.settings.storage
        store = open_store(self.store_url, retention=storage.retention, pool_size=storage.pool_size)
        try:
            bus = open_bus(bus_url or self.settings.bus_url)
        except ValueError as exc:
            raise BadArgument(f"--bus: {exc}") from None
        try:
            app = self.agent.app(config=self.config, store=store, bus=bus)
        except ValueError as exc:  # the agent set up wrong: say so in one line
            raise BadArgument(str(exc)) from None
        observability = self.settings.observability
        if worker is not None and observability.metrics_port is not None:
            observability = replace(observability, metrics_port=observability.metrics_port + worker)
        self.said = observe(app, observability, self.settings.host, self.agent.name)
        if worker is not None:
            for line in self.said:
                typer.echo(f"accord: worker {worker}: {line}", err=True)
        return app

    def check(self) -> None:
        """Make the app once, unserved, so an agent set up wrong is said before any worker
        starts."""
        try:
            self.agent.app(config=self.config, store=open_store(MEMORY), bus=open_bus(MEMORY))
        except ValueError as exc:
            raise BadArgument(str(exc)) from None

    def check_ports(self) -> None:
        """Fail with one line if a port to serve on is taken."""
        ensure_free(self.settings.host, self.settings.port)
        if self.config.grpc_port is not None:
            ensure_free(self.settings.host, self.config.grpc_port, "--grpc-port")

    def announce(self) -> None:
        """Say where the agent is served and where its tasks are kept."""
        settings, config = self.settings, self.config
        host, port = settings.host, settings.port
        scheme = "https" if config.tls is not None else "http"
        url = f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"
        workers = f" with {settings.workers} workers" if settings.workers > 1 else ""
        typer.echo(
            f"accord: serving {self.agent.name} at {url}{workers} (card: {url}{CARD_PATH})",
            err=True,
        )
        if config.public_url:
            typer.echo(f"accord: clients reach it at {config.public_url}", err=True)
        if self.hosts_line:
            typer.echo(f"accord: {self.hosts_line}", err=True)
        typer.echo(f"accord: tasks are kept in {display_url(self.store_url)}", err=True)
        for line in self.said:
            typer.echo(f"accord: {line}", err=True)
        note = earlier_default_note() if settings.storage.url is None else None
        if note is not None:
            typer.echo(f"accord: {note}", err=True)
        if (warning := pool_warning(self.store_url, settings.storage.pool_size)) is not None:
            typer.echo(f"accord: warning: {warning}", err=True)


def _answered_hosts(host: str, port: int, config: ServerConfig) -> tuple[AllowedHosts | None, str]:
    """The `Host` names the agent answers (None: any), and a line saying so when it is not
    obvious: the names of `host:port` and those given, else any with a public URL, else the
    names of `host:port` alone."""
    given = config.allowed_hosts
    hosts = exposure.allowed_hosts(host, port, given.patterns if given is not None else None)
    if given is not None:
        return hosts, f"answering requests for Host {', '.join(hosts.patterns)}; others get 400"
    if config.public_url:
        return None, ""
    if not exposure.beyond_loopback(host):
        return hosts, ""
    return hosts, (
        f"answering only requests for Host {', '.join(hosts.patterns)}; others get 400,"
        " since the card the agent signs names the URL a request came in at. Let clients"
        " use other names with --allowed-host NAME (repeatable), or give the agent's URL"
        " with --public-url URL"
    )


def _import(module_name: str) -> ModuleType:
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: modules in the current directory
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise BadArgument(
                f"no module named {module_name!r} (looked in {os.getcwd()} and"
                " the installed packages)"
            ) from None
        raise BadArgument(f"cannot import {module_name!r}: {_failure(exc)}") from None
    except Exception as exc:  # the module's own code failed: say what and where, in one line
        raise BadArgument(f"cannot import {module_name!r}: {_failure(exc)}") from None


def _failure(exc: BaseException) -> str:
    """`Type: message (file, line N)`: the exception and the innermost line that raised it."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{type(exc).__name__}: {exc.msg} ({exc.filename}, line {exc.lineno})"
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if "importlib" not in frame.filename and not frame.filename.startswith("<frozen")
    ]
    where = f" ({frames[-1].filename}, line {frames[-1].lineno})" if frames else ""
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message}{where}" if message else f"{type(exc).__name__}{where}"


def _is_asgi_app(candidate: object) -> bool:
    """Whether `candidate` can be called as `app(scope, receive, send)`."""
    if isinstance(candidate, type) or not callable(candidate):
        return False
    try:
        parameters = inspect.signature(candidate).parameters.values()
    except (TypeError, ValueError):
        return True  # no introspectable signature; let uvicorn try
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    return len(positional) == 3


def _tune_malloc() -> None:
    """Have glibc give large blocks (request bodies, encoded answers) their own mappings,
    returned to the system when freed: by default the threshold for that grows after each
    such block, so the blocks of later requests stay in the heap, which fragments and keeps
    its peak (bench/large_bodies.py: 20 parallel 9 MiB sends held 209 MB after, 33 MB with
    this). No effect elsewhere than glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, 256 * 1024)


_M_MMAP_THRESHOLD = -3


def _tune_gc() -> None:
    """Keep what the server has loaded out of every collection (freeze) and make the young
    collections rarer than the default, whose thresholds would walk the objects of requests
    in flight again and again (+30% Task-mode throughput when it came in). A young collection
    walks about as many objects as its threshold, in one pause: 10,000 is about 3-4 ms of CPU
    (50,000 was 15-24 ms, the largest part of the p99 at 50 connections); the objects stores
    keep per task are not tracked, so the collections cost the same in all (docs/benchmarks.md)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 100)
