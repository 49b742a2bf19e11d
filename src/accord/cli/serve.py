"""`accord serve`: find an agent or ASGI app by `module:attribute` and run it with uvicorn."""

from __future__ import annotations

import ctypes
import gc
import importlib
import inspect
import os
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import typer
import uvicorn
from uvicorn.config import LOG_LEVELS

from accord.agents import Agent
from accord.cli.errors import BadArgument
from accord.cli.storage import StoreSettings, display_url, prepare_store
from accord.runtime import DEFAULT_BUS_URL, open_bus
from accord.server.http_limits import HttpLimits


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
    found: Any = _import(module_name)
    for name in attribute.split("."):
        if not hasattr(found, name):
            raise BadArgument(f"module {module_name!r} has no attribute {attribute!r}")
        found = getattr(found, name)
    if isinstance(found, Agent) or _is_asgi_app(found):
        return found
    raise BadArgument(f"{target} is a {type(found).__name__}, not an accord.Agent or an ASGI app")


@dataclass(frozen=True, slots=True)
class ReplicaSettings:
    """How a server works with other replicas: the bus, the runner TTL, the shutdown grace."""

    bus_url: str = DEFAULT_BUS_URL
    runner_ttl: float = 15.0
    graceful_timeout: float = 10.0


def run(
    target: str | Agent,
    host: str,
    port: int,
    log_level: str,
    storage: StoreSettings | None = None,
    replica: ReplicaSettings | None = None,
    grpc_port: int | None = None,
    limits: HttpLimits | None = None,
    debug: bool = False,
) -> None:
    """Serve the app named by `target` (or the agent `target` is) until interrupted.

    An agent gets the store `storage` names (its schema upgraded first) and the bus
    `replica` names, and with `grpc_port` the gRPC services on that port of `host`; an ASGI
    app is served as it is. Every connection is held to `limits` (default `HttpLimits()`);
    `debug` shows callers the errors of the agent and the server (for development only).
    """
    if log_level not in LOG_LEVELS:
        raise BadArgument(f"--log-level must be one of {', '.join(LOG_LEVELS)}, got {log_level!r}")
    replica = replica if replica is not None else ReplicaSettings()
    found = find_target(target) if isinstance(target, str) else target
    app: Any = found
    if grpc_port is not None and not isinstance(found, Agent):
        raise BadArgument("--grpc-port serves an accord.Agent, not an ASGI app")
    if isinstance(found, Agent):
        storage = storage if storage is not None else StoreSettings()
        store = prepare_store(storage)
        try:
            bus = open_bus(replica.bus_url)
        except ValueError as exc:
            raise BadArgument(f"--bus: {exc}") from None
        typer.echo(f"accord: tasks are kept in {display_url(storage.url)}", err=True)
        app = found.app(
            store=store,
            bus=bus,
            runner_ttl=replica.runner_ttl,
            cleanup_interval=storage.cleanup_interval,
            grpc_port=grpc_port,
            grpc_host=host,
            debug=debug,
        )
    _tune_gc()
    _tune_malloc()
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=int(replica.graceful_timeout) or 1,
        **(limits or HttpLimits()).uvicorn_options(),
    )


def _import(module_name: str) -> ModuleType:
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: modules in the current directory
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise BadArgument(f"no module named {module_name!r}") from None
        raise BadArgument(f"cannot import {module_name!r}: {exc}") from None


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
