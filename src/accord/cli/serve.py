"""`accord serve`: find an agent or ASGI app by `module:attribute` and run it with uvicorn."""

from __future__ import annotations

import ctypes
import gc
import importlib
import inspect
import ipaddress
import os
import sys
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import typer
import uvicorn
from uvicorn.config import LOG_LEVELS

from accord.agents import Agent
from accord.cli import serve_options
from accord.cli.errors import BadArgument, exit_on_errors
from accord.cli.log_config import log_config
from accord.cli.ports import ensure_free
from accord.cli.signing_options import TrustSettings
from accord.cli.storage import (
    StoreSettings,
    display_url,
    earlier_default_note,
    pool_warning,
    prepare_store,
)
from accord.runtime import DEFAULT_BUS_URL, open_bus
from accord.runtime.delivery import RetrySchedule
from accord.runtime.replicas import HANDOVER_TIMEOUT
from accord.server.http_limits import HttpLimits
from accord.server.limits import Limits
from accord.server.tls import TlsFiles
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
class ReplicaSettings:
    """How a server works with other replicas: the bus, the runner TTL, the hand-over wait of
    a cancel, the shutdown grace."""

    bus_url: str = DEFAULT_BUS_URL
    runner_ttl: float = 15.0
    graceful_timeout: float = 10.0
    handover_timeout: float = HANDOVER_TIMEOUT


def run(
    target: str | Agent,
    host: str,
    port: int,
    log_level: str,
    storage: StoreSettings | None = None,
    replica: ReplicaSettings | None = None,
    grpc_port: int | None = None,
    tls: TlsFiles | None = None,
    limits: Limits | None = None,
    http_limits: HttpLimits | None = None,
    debug: bool = False,
    trust: TrustSettings | None = None,
    public_url: str | None = None,
    *,
    push_schedule: RetrySchedule | None = None,
    allowed_hosts: Sequence[str] | None = None,
) -> None:
    """Serve the agent or app named by `target` (or the agent `target` is) until interrupted
    (see `serve`); `tls` serves HTTPS (and gRPC over TLS), `limits` bound callers,
    `http_limits` each connection; `debug` shows callers the errors of the agent and the
    server (for development only); an agent signs with the key store `trust` names and
    retries webhook deliveries on `push_schedule` (default: RetrySchedule()); `public_url`
    (checked: `serve_options.public_url`) is where clients reach it; `allowed_hosts` the
    `Host` names it answers besides those it is served at (see `accord.create_app`)."""
    if log_level not in LOG_LEVELS:
        raise BadArgument(f"--log-level must be one of {', '.join(LOG_LEVELS)}, got {log_level!r}")
    trust = trust if trust is not None else TrustSettings()
    trust.check()
    public_url = serve_options.public_url(public_url)
    hosts = serve_options.allowed_hosts(list(allowed_hosts or ()))
    found = find_target(target) if isinstance(target, str) else target
    options: dict[str, Any] = {}
    if public_url is not None:
        options["public_url"] = public_url
    if hosts is not None:
        options["allowed_hosts"] = hosts
    if tls is not None:
        options["tls"] = tls
    if limits is not None:
        options["limits"] = limits
    if debug:
        options["debug"] = True
    if isinstance(found, Agent):
        options.update(trust.app_options())
        if push_schedule is not None:
            options["push_schedule"] = push_schedule
    serve(found, host, port, log_level, storage, replica, grpc_port, options, tls, http_limits)


def serve_agent(
    agent: Agent,
    host: str,
    port: int,
    *,
    store: str | None,
    log_level: str,
    options: Mapping[str, Any],
) -> None:
    """`Agent.serve`: `agent` on `host:port` with the store at the URL `store` (None: its own
    default file) until interrupted; a failure is one line on stderr and exit status 1."""
    storage = StoreSettings() if store is None else StoreSettings(url=store)
    exit_on_errors(lambda: serve(agent, host, port, log_level, storage, app_options=options))


def serve(
    found: Any,
    host: str,
    port: int,
    log_level: str = "info",
    storage: StoreSettings | None = None,
    replica: ReplicaSettings | None = None,
    grpc_port: int | None = None,
    app_options: Mapping[str, Any] | None = None,
    tls: TlsFiles | None = None,
    http_limits: HttpLimits | None = None,
) -> None:
    """Serve an `accord.Agent` or an ASGI app until interrupted; the ports are checked before
    the server starts, after the store and the bus. Every connection is held to
    `http_limits` (default `HttpLimits()`).

    An agent gets the store `storage` names (its schema upgraded first) and the bus
    `replica` names, and with `grpc_port` the gRPC services on that port of `host`; it says
    on stderr where it is served and where its tasks are kept. An ASGI app is served as it is.
    """
    replica = replica if replica is not None else ReplicaSettings()
    if (grpc_port is not None or app_options) and not isinstance(found, Agent):
        raise BadArgument(
            "--grpc-port, TLS, limits, --public-url and --allowed-host serve an accord.Agent,"
            " not an ASGI app"
        )
    if isinstance(found, Agent):
        app = _agent_app(found, host, port, storage, replica, grpc_port, app_options or {})
    else:
        ensure_free(host, port)
        app = found
    _tune_gc()
    _tune_malloc()
    server_options = tls.uvicorn_options() if tls is not None else {}
    server_options |= (http_limits or HttpLimits()).uvicorn_options(server_options.get("http"))
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        log_config=log_config(log_level),
        access_log=False,
        timeout_graceful_shutdown=int(replica.graceful_timeout) or 1,
        **server_options,
    )


def _agent_app(
    agent: Agent,
    host: str,
    port: int,
    storage: StoreSettings | None,
    replica: ReplicaSettings,
    grpc_port: int | None,
    app_options: Mapping[str, Any],
) -> Any:
    """The agent's app on its store and bus, once they open and the ports are free."""
    storage = storage if storage is not None else StoreSettings()
    store_agent = app_options.get("store_agent") or storage.agent or agent.name
    store_url = storage.url_for(store_agent)
    store = prepare_store(store_url, storage.retention, store_agent, storage.pool_size)
    try:
        bus = open_bus(replica.bus_url)
    except ValueError as exc:
        raise BadArgument(f"--bus: {exc}") from None
    hosts, hosts_line = _answered_hosts(host, port, app_options)
    options: dict[str, Any] = {
        "store": store,
        "bus": bus,
        "runner_ttl": replica.runner_ttl,
        "handover_timeout": replica.handover_timeout,
        "cleanup_interval": storage.cleanup_interval,
        "grpc_port": grpc_port,
        "grpc_host": host,
        "http_port": port,
        "store_agent": store_agent,
    }
    try:
        app = agent.app(**{**options, **app_options, "allowed_hosts": hosts})
    except ValueError as exc:  # the agent or an option set up wrong: say so in one line
        raise BadArgument(str(exc)) from None
    ensure_free(host, port)  # after the app: an agent set up wrong is said first
    if grpc_port is not None:
        ensure_free(host, grpc_port, "--grpc-port")
    scheme = "https" if "tls" in app_options else "http"
    url = f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"
    typer.echo(f"accord: serving {agent.name} at {url} (card: {url}{CARD_PATH})", err=True)
    if app_options.get("public_url"):
        typer.echo(f"accord: clients reach it at {app_options['public_url']}", err=True)
    if hosts_line:
        typer.echo(f"accord: {hosts_line}", err=True)
    typer.echo(f"accord: tasks are kept in {display_url(store_url)}", err=True)
    note = earlier_default_note() if storage.url is None else None
    if note is not None:
        typer.echo(f"accord: {note}", err=True)
    if (warning := pool_warning(store_url, storage.pool_size)) is not None:
        typer.echo(f"accord: warning: {warning}", err=True)
    return app


def _answered_hosts(
    host: str, port: int, app_options: Mapping[str, Any]
) -> tuple[AllowedHosts | None, str]:
    """The `Host` names the agent answers (None: any), and a line saying so when it is not
    obvious: the names of `host:port` and those given, else any with a public URL, else the
    names of `host:port` alone."""
    given = app_options.get("allowed_hosts")
    if given is not None:
        try:
            extra = given.patterns if isinstance(given, AllowedHosts) else tuple(given)
            hosts = AllowedHosts([*AllowedHosts.serving(host, port).patterns, *extra])
        except ValueError as exc:
            raise BadArgument(f"allowed_hosts: {exc}") from None
        return hosts, f"answering requests for Host {', '.join(hosts.patterns)}; others get 400"
    if app_options.get("public_url"):
        return None, ""
    hosts = AllowedHosts.serving(host, port)
    if _is_loopback(host):
        return hosts, ""
    return hosts, (
        f"answering only requests for Host {', '.join(hosts.patterns)}; others get 400,"
        " since the card the agent signs names the URL a request came in at. Let clients"
        " use other names with --allowed-host NAME (repeatable), or give the agent's URL"
        " with --public-url URL"
    )


def _is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name
        return False


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
    """Make the cyclic GC rarer: a server keeps many long-lived objects that it would walk
    again and again, while requests make almost no reference cycles (measured in
    docs/benchmarks.md: +30% Task-mode throughput, p99 at 50 connections 346 -> 80 ms)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
