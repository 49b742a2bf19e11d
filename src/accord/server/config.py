"""ServerConfig: how a server serves its agent, checked once for create_app and accord serve."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from accord.keys.store import KeyStore
from accord.runtime.delivery import RetrySchedule
from accord.runtime.replicas import HANDOVER_TIMEOUT
from accord.server.body_budget import DEFAULT_BODY_BUDGET
from accord.server.http_request import DEFAULT_MAX_BODY_BYTES
from accord.server.limits import Limits
from accord.server.public_url import check_public_url
from accord.server.tls import TlsFiles
from accord.store.retention import DEFAULT_CLEANUP_INTERVAL
from accord.web.allowed_hosts import AllowedHosts
from accord.web.webhook_guard import parse_network


class ServerConfigError(ValueError):
    """A setting of a ServerConfig that cannot be: its message starts with the `field`'s name."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """How a server serves its agent: `create_app`'s settings, and `accord serve`'s and
    `Agent.serve`'s for the app they make. Checked when made: a setting that cannot be is
    ServerConfigError (a ValueError) naming it.

    `public_url` is the URL clients should use: the cards' interfaces, their signatures'
    `jku`, push notifications' issuer and `RequestContext.base_url` name it. Without it they
    name the URL each request came in on, and the app answers only requests whose `Host` is
    in `allowed_hosts` (an `AllowedHosts`, or its patterns), by default the loopback names
    (at `http_port`, if given); any other gets 400, so no caller can have the agent sign a
    card naming a server of the caller's choice. With `public_url`, `allowed_hosts` is
    checked only if given.
    A request body may have `max_body_bytes`; those being served take at most
    `max_body_memory` bytes together (None: no bound): a large one that does not fit waits a
    little, then gets 503 with Retry-After. `limits` bound what one caller may ask (default:
    the safe `Limits()` for an agent declaring security, none otherwise).
    A replica that stops renewing its heartbeat for `runner_ttl` seconds has its running
    tasks taken over by another, and a cancel for a task another replica runs waits
    `handover_timeout` seconds for it to cancel the task before canceling it here
    (docs/architecture.md, "Several replicas"). The store keeps the tasks of the agent named
    `store_agent` (default: the agent's name); every `cleanup_interval` seconds (None: never)
    it forgets what its retention says is old.
    With `grpc_port` (0: any free one), the gRPC services of 1.0 and 0.3 are served on that
    port of `grpc_host` while the app runs (needs the `grpc` extra), and the cards list them;
    with `tls`, over TLS (the HTTP server's TLS is the ASGI server's: `accord serve --tls-*`).
    The cards a gRPC call gets name the HTTP interfaces at `public_url`, or else at
    `grpc_host` and `http_port`, the port the ASGI server listens on (`accord serve` sets
    it; gRPC does not say where its calls came in).
    An agent's failure or an unexpected error tells the caller only a reference to the error
    in the log; `debug` (for development) adds the exception's type and text.
    `keys` signs the cards and push notifications (default: one ES256 key made when the app
    is, in memory); its public keys are served at `/.well-known/jwks.json`. Webhooks may not
    point at loopback, private or metadata addresses unless `push_allow` lists them
    (addresses or CIDR networks; see docs/push.md); a delivery is retried and parked as
    `push_schedule` says (default: `RetrySchedule()`).
    """

    public_url: str | None = None
    allowed_hosts: AllowedHosts | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_body_memory: int | None = DEFAULT_BODY_BUDGET
    runner_ttl: float = 15.0
    handover_timeout: float = HANDOVER_TIMEOUT
    cleanup_interval: float | None = DEFAULT_CLEANUP_INTERVAL
    grpc_port: int | None = None
    grpc_host: str = "127.0.0.1"
    http_port: int | None = None
    tls: TlsFiles | None = None
    limits: Limits | None = None
    debug: bool = False
    keys: KeyStore | None = None
    push_allow: tuple[str, ...] = ()
    push_schedule: RetrySchedule | None = None
    store_agent: str | None = None

    def __post_init__(self) -> None:
        if self.public_url is not None:
            try:
                check_public_url(self.public_url)
            except ValueError as exc:
                raise ServerConfigError("public_url", str(exc)) from None
        object.__setattr__(self, "allowed_hosts", _hosts(self.allowed_hosts))
        if isinstance(self.push_allow, str):
            raise ServerConfigError("push_allow", _not_a_string("push_allow", self.push_allow))
        object.__setattr__(self, "push_allow", tuple(self.push_allow))
        for entry in self.push_allow:
            try:
                parse_network(entry)
            except ValueError as exc:
                raise ServerConfigError("push_allow", f"push_allow: {exc}") from None
        _at_least("max_body_bytes", self.max_body_bytes, 1)
        _at_least("max_body_memory", self.max_body_memory, 1)
        _positive("runner_ttl", self.runner_ttl)
        _at_least("handover_timeout", self.handover_timeout, 0)
        _positive("cleanup_interval", self.cleanup_interval)
        for name in ("grpc_port", "http_port"):
            port = getattr(self, name)
            if port is not None and not 0 <= port <= 65535:
                raise ServerConfigError(name, f"{name} must be a port (0 to 65535), got {port}")

    @classmethod
    def of(cls, config: ServerConfig | None = None, /, **options: Any) -> ServerConfig:
        """`config` (default: the defaults) with `options` set over it, checked."""
        if config is None:
            return cls(**options)
        return dataclasses.replace(config, **options) if options else config

    def answered_hosts(self) -> AllowedHosts | None:
        """The hosts the app answers (None: any): those given, else any when a public URL
        names the agent (no URL is then made from a request), else the loopback names."""
        if self.allowed_hosts is not None:
            return self.allowed_hosts
        return None if self.public_url is not None else AllowedHosts.loopback(self.http_port)


def _hosts(given: AllowedHosts | Sequence[str] | None) -> AllowedHosts | None:
    if given is None or isinstance(given, AllowedHosts):
        return given
    if isinstance(given, str):
        raise ServerConfigError("allowed_hosts", _not_a_string("allowed_hosts", given))
    try:
        return AllowedHosts(given)
    except ValueError as exc:
        raise ServerConfigError("allowed_hosts", f"allowed_hosts: {exc}") from None


def _not_a_string(name: str, value: str) -> str:
    return f"{name} is a list of names, got the string {value!r}"


def _positive(name: str, value: float | None) -> None:
    if value is not None and not value > 0:
        raise ServerConfigError(name, f"{name} must be positive, got {value}")


def _at_least(name: str, value: float | None, least: float) -> None:
    if value is not None and not value >= least:
        raise ServerConfigError(name, f"{name} must be at least {least}, got {value}")
