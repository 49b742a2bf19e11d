"""create_app: the ASGI application serving one agent over A2A."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route

from accord.agents.agent import Agent
from accord.codecs import JSONRPC_CODECS
from accord.keys.cards import JWKS_PATH
from accord.keys.store import KeyStore
from accord.runtime import EventBus, TaskRuntime
from accord.runtime.delivery import DeliveryWorker, RetrySchedule
from accord.runtime.push import PushSender
from accord.runtime.replicas import HANDOVER_TIMEOUT
from accord.server.body_budget import DEFAULT_BODY_BUDGET, BodyBudget
from accord.server.card_endpoint import (
    CARD_PATHS,
    EXTENDED_CARD_PATH,
    AgentCardEndpoint,
    CardSigner,
)
from accord.server.extended_card import ExtendedCardRoute
from accord.server.http_request import DEFAULT_MAX_BODY_BYTES
from accord.server.interfaces import ServedInterfaces
from accord.server.jsonrpc import JsonRpcBinding
from accord.server.limits import Limits
from accord.server.own_routes import guarded_routes
from accord.server.paths import CollapseSlashes
from accord.server.pipeline import Authenticator, Hook, RequestPipeline
from accord.server.protection import secured
from accord.server.public_url import check_public_url
from accord.server.rest import HTTP_ERROR_HANDLERS, REST_CODECS, RestBinding
from accord.server.rpc_shortcut import JsonRpcShortcut
from accord.server.service import A2AService
from accord.server.tls import TlsFiles
from accord.store import InMemoryTaskStore, TaskStore
from accord.store.retention import DEFAULT_CLEANUP_INTERVAL, clean_periodically
from accord.types import TransportProtocol
from accord.web.allowed_hosts import AllowedHosts, HostCheck
from accord.web.webhook_guard import WebhookGuard


def create_app(
    agent: Agent,
    *,
    store: TaskStore | None = None,
    bus: EventBus | None = None,
    public_url: str | None = None,
    allowed_hosts: AllowedHosts | Sequence[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_body_memory: int | None = DEFAULT_BODY_BUDGET,
    runner_ttl: float = 15.0,
    handover_timeout: float = HANDOVER_TIMEOUT,
    cleanup_interval: float | None = DEFAULT_CLEANUP_INTERVAL,
    grpc_port: int | None = None,
    grpc_host: str = "127.0.0.1",
    http_port: int | None = None,
    authenticator: Authenticator | None = None,
    hooks: Sequence[Hook] = (),
    tls: TlsFiles | None = None,
    limits: Limits | None = None,
    debug: bool = False,
    keys: KeyStore | None = None,
    push_allow: Sequence[str] = (),
    push_schedule: RetrySchedule | None = None,
    store_agent: str | None = None,
) -> Starlette:
    """An ASGI app answering A2A for `agent`.

    The agent card is served at both well-known paths (the extended card at 0.2's
    `/agent/authenticatedExtendedCard`), JSON-RPC at `/` and HTTP+JSON at the paths of each
    version (see docs/versions.md), and after them the agent's own `routes`; the cards list
    every interface. `public_url` is the URL clients should use: the cards' interfaces,
    their signatures' `jku`, push notifications' issuer and `RequestContext.base_url` name
    it (one that cannot be an agent's URL is ValueError). Without it they name the URL each
    request came in on, and the app answers only requests whose `Host` is in
    `allowed_hosts` (an `AllowedHosts`, or its patterns), by default the loopback names (at
    `http_port`, if given); any other gets 400, so no caller can have the agent sign a card
    naming a server of the caller's choice. With `public_url`, `allowed_hosts` is checked
    only if given. The store defaults to memory, the bus to this process. A replica that
    stops renewing its heartbeat for `runner_ttl` seconds has its running tasks taken over
    by another, and a cancel for a task another replica runs waits `handover_timeout`
    seconds for it to cancel the task before canceling it here (docs/architecture.md,
    "Several replicas"). On startup the store is opened (its schema created or upgraded)
    and bound to the agent: a store that keeps the tasks of an agent of another name than
    `store_agent` (default: the agent's name) refuses to start the app
    (`StoreOfAnotherAgent`); then, every
    `cleanup_interval` seconds (None: never), it forgets what its retention says is old.
    With `grpc_port` (0: any free one), the gRPC services of 1.0 and 0.3 are served on that
    port of `grpc_host` while the app runs (needs the `grpc` extra), and the cards list them;
    with `tls`, over TLS (the HTTP server's TLS is the ASGI server's: `accord serve --tls-*`).
    The cards a gRPC call gets name the HTTP interfaces at `public_url`, or else at
    `grpc_host` and `http_port`, the port the ASGI server listens on (`accord serve` passes
    it; gRPC does not say where its calls came in).
    Every request of every binding goes through one `RequestPipeline` (`app.state.pipeline`):
    `authenticator` says who sent it (or refuses it), `hooks` run around every operation; an
    agent declaring `security` (`accord.auth.Security`) gets its authentication and
    authorization (docs/security.md). `limits` bound what one caller may ask (default: the
    safe `Limits()` for an agent declaring security, none otherwise).
    Request bodies being served take at most `max_body_memory` bytes together (None: no
    bound): a large one that does not fit waits a little, then gets 503 with Retry-After.
    An agent's failure or an unexpected error tells the caller only a reference to the error
    in the log; `debug` (for development) adds the exception's type and text.
    `keys` signs the cards and push notifications (default: one ES256 key made now, in
    memory); its public keys are served at `/.well-known/jwks.json`. Webhooks may not point
    at loopback, private or metadata addresses unless `push_allow` lists them (addresses or
    CIDR networks; see docs/push.md); a delivery is retried and parked as `push_schedule`
    says (default: `RetrySchedule()`).
    """
    if public_url is not None:
        check_public_url(public_url)
    hosts = _answered_hosts(allowed_hosts, public_url, http_port)
    keys = keys if keys is not None else KeyStore.ephemeral()
    store = store if store is not None else InMemoryTaskStore()
    push = None
    if agent.card("").capabilities.push_notifications:
        push = PushSender(keys=keys, guard=WebhookGuard(push_allow), issuer=public_url)
    runtime = TaskRuntime(
        agent.executor,
        store=store,
        bus=bus,
        runner_ttl=runner_ttl,
        handover_timeout=handover_timeout,
        push=push,
        deliveries=DeliveryWorker(store, push, schedule=push_schedule) if push else None,
        debug=debug,
    )
    # What the cards list: each binding mounted below, with the versions it answers and where.
    interfaces = ServedInterfaces(public_url)
    interfaces.add(TransportProtocol.JSONRPC, JSONRPC_CODECS)
    # Every HTTP+JSON version is listed at the base URL: 0.3's `/v1` is part of its paths
    # (`/v1/message:send`), which 0.3 clients append to the interface URL themselves.
    for rest_codec in REST_CODECS:
        interfaces.add(TransportProtocol.HTTP_JSON, [rest_codec.version])
    service = A2AService(agent, runtime, interfaces)
    authenticator, hooks = secured(agent, authenticator, hooks, limits, runtime)
    pipeline = RequestPipeline(
        service,
        agent.extensions,
        authenticator=authenticator,
        hooks=hooks,
        debug=debug,
        card_signer=CardSigner(keys, public_url),
        push=push,
        public_url=public_url,
    )
    card = AgentCardEndpoint(agent, interfaces, keys)
    budget = BodyBudget(max(max_body_memory, max_body_bytes)) if max_body_memory else None
    rpc = JsonRpcBinding(pipeline, max_body_bytes=max_body_bytes, body_budget=budget)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await runtime.store.open()
        await runtime.store.bind_agent(store_agent or agent.name)
        await runtime.open()
        cleaner = None
        if cleanup_interval is not None:
            cleaner = asyncio.create_task(
                clean_periodically(runtime.store, cleanup_interval), name="accord-store-cleanup"
            )
        grpc_server = None
        if grpc_port is not None:
            from accord.grpc.services import GRPC_SERVICES
            from accord.server.grpc_binding import GrpcBinding, http_base_url, start_server

            base_url = public_url or http_base_url(grpc_host, http_port, tls is not None)
            binding = GrpcBinding(pipeline, base_url)
            grpc_server, bound = await start_server(binding, grpc_host, grpc_port, tls)
            versions = [spec.version.value for spec in GRPC_SERVICES]
            interfaces.add(TransportProtocol.GRPC, versions, port=bound, tls=tls is not None)
        yield
        if grpc_server is not None:
            await grpc_server.stop(None)
        if cleaner is not None:
            cleaner.cancel()
            await asyncio.gather(cleaner, return_exceptions=True)
        await runtime.close()
        await runtime.store.close()

    routes: list[BaseRoute] = [Route(path, card.public, methods=["GET"]) for path in CARD_PATHS]
    routes.append(
        Route(EXTENDED_CARD_PATH, ExtendedCardRoute(pipeline, card).endpoint, methods=["GET"])
    )
    routes.append(Route(JWKS_PATH, card.jwks, methods=["GET"]))
    routes.append(Route("/", rpc.handle, methods=["POST"]))
    rest = RestBinding(pipeline, max_body_bytes=max_body_bytes, body_budget=budget)
    routes.extend(rest.routes())
    routes.extend(guarded_routes(agent.routes, authenticator))
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers=HTTP_ERROR_HANDLERS,
        middleware=[
            *(
                [Middleware(HostCheck, hosts=hosts, refusal=HOST_REFUSED)]
                if hosts is not None
                else []
            ),
            Middleware(CollapseSlashes),
            *([Middleware(budget.middleware)] if budget else []),
            Middleware(JsonRpcShortcut, binding=rpc),
        ],
    )
    app.state.runtime = runtime
    app.state.service = service
    app.state.pipeline = pipeline
    app.state.body_budget = budget
    return app


HOST_REFUSED = (
    "This agent does not answer to the Host this request names. Its operator can allow the"
    " name (accord serve --allowed-host NAME; create_app(allowed_hosts=[...])) or give the"
    " agent its public URL (--public-url URL)."
)


def _answered_hosts(
    allowed: AllowedHosts | Sequence[str] | None, public_url: str | None, http_port: int | None
) -> AllowedHosts | None:
    """The hosts the app answers (None: any): those given, else any when a public URL names
    the agent (no URL is then made from a request), else the loopback names."""
    if isinstance(allowed, str):
        raise ValueError(f"allowed_hosts is a list of names, got the string {allowed!r}")
    if allowed is not None:
        return allowed if isinstance(allowed, AllowedHosts) else AllowedHosts(allowed)
    return None if public_url is not None else AllowedHosts.loopback(http_port)
