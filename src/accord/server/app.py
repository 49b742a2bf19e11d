"""create_app: the ASGI application serving one agent over A2A."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route

from accord.agents.agent import Agent
from accord.codecs import JSONRPC_CODECS
from accord.keys.cards import JWKS_PATH
from accord.keys.store import KeyStore
from accord.runtime import EventBus, TaskRuntime
from accord.runtime.delivery import DeliveryWorker
from accord.runtime.push import PushSender
from accord.server.body_budget import BodyBudget
from accord.server.card_endpoint import (
    CARD_PATHS,
    EXTENDED_CARD_PATH,
    AgentCardEndpoint,
    CardSigner,
)
from accord.server.config import ServerConfig
from accord.server.extended_card import ExtendedCardRoute
from accord.server.health import PROBE_PATHS, Readiness, probe_routes
from accord.server.interfaces import ServedInterfaces
from accord.server.jsonrpc import JsonRpcBinding
from accord.server.own_routes import guarded_routes
from accord.server.paths import CollapseSlashes
from accord.server.pipeline import Authenticator, Hook, RequestPipeline
from accord.server.protection import secured
from accord.server.rest import HTTP_ERROR_HANDLERS, REST_CODECS, RestBinding
from accord.server.rpc_shortcut import JsonRpcShortcut
from accord.server.service import A2AService
from accord.store import InMemoryTaskStore, TaskStore
from accord.store.retention import clean_periodically
from accord.types import TransportProtocol
from accord.web.allowed_hosts import HostCheck
from accord.web.webhook_guard import WebhookGuard


def create_app(
    agent: Agent,
    config: ServerConfig | None = None,
    *,
    store: TaskStore | None = None,
    bus: EventBus | None = None,
    authenticator: Authenticator | None = None,
    hooks: Sequence[Hook] = (),
    **options: Any,
) -> Starlette:
    """An ASGI app answering A2A for `agent`, served as `config` (a `ServerConfig`) says, with
    the settings `options` names set over it (`create_app(agent, public_url=...)`); see
    `ServerConfig` for each.

    The agent card is served at both well-known paths (the extended card at 0.2's
    `/agent/authenticatedExtendedCard`), JSON-RPC at `/` and HTTP+JSON at the paths of each
    version (see docs/versions.md), and after them the agent's own `routes`; the cards list
    every interface. The store defaults to memory, the bus to this process. On startup the
    store is opened (its schema created or upgraded) and bound to the agent (a store that
    keeps the tasks of another agent refuses to start the app: `StoreOfAnotherAgent`).
    Every request of every binding goes through one `RequestPipeline` (`app.state.pipeline`):
    `authenticator` says who sent it (or refuses it), `hooks` run around every operation; an
    agent declaring `security` (`accord.auth.Security`) gets its authentication and
    authorization (docs/security.md). The config served is `app.state.config`.
    """
    config = ServerConfig.of(config, **options)
    public_url = config.public_url
    keys = config.keys if config.keys is not None else KeyStore.ephemeral()
    store = store if store is not None else InMemoryTaskStore()
    push = None
    if agent.card("").capabilities.push_notifications:
        push = PushSender(keys=keys, guard=WebhookGuard(config.push_allow), issuer=public_url)
    runtime = TaskRuntime(
        agent.executor,
        store=store,
        bus=bus,
        runner_ttl=config.runner_ttl,
        handover_timeout=config.handover_timeout,
        push=push,
        deliveries=DeliveryWorker(store, push, schedule=config.push_schedule) if push else None,
        debug=config.debug,
    )
    # What the cards list: each binding mounted below, with the versions it answers and where.
    interfaces = ServedInterfaces(public_url)
    interfaces.add(TransportProtocol.JSONRPC, JSONRPC_CODECS)
    # Every HTTP+JSON version is listed at the base URL: 0.3's `/v1` is part of its paths
    # (`/v1/message:send`), which 0.3 clients append to the interface URL themselves.
    for rest_codec in REST_CODECS:
        interfaces.add(TransportProtocol.HTTP_JSON, [rest_codec.version])
    service = A2AService(agent, runtime, interfaces)
    authenticator, hooks = secured(agent, authenticator, hooks, config.limits, runtime)
    pipeline = RequestPipeline(
        service,
        agent.extensions,
        authenticator=authenticator,
        hooks=hooks,
        debug=config.debug,
        card_signer=CardSigner(keys, public_url),
        push=push,
        public_url=public_url,
    )
    card = AgentCardEndpoint(agent, interfaces, keys)
    max_body_bytes = config.max_body_bytes
    memory = config.max_body_memory
    budget = BodyBudget(max(memory, max_body_bytes)) if memory else None
    rpc = JsonRpcBinding(pipeline, max_body_bytes=max_body_bytes, body_budget=budget)
    readiness = Readiness(runtime)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await runtime.store.open()
        await runtime.store.bind_agent(config.store_agent or agent.name)
        await runtime.open()
        cleaner = None
        if config.cleanup_interval is not None:
            cleaning = clean_periodically(runtime.store, config.cleanup_interval)
            cleaner = asyncio.create_task(cleaning, name="accord-store-cleanup")
        grpc_server = None
        if config.grpc_port is not None:
            from accord.grpc.services import GRPC_SERVICES
            from accord.server.grpc_binding import GrpcBinding, http_base_url, start_server

            tls = config.tls
            base_url = public_url or http_base_url(
                config.grpc_host, config.http_port, tls is not None
            )
            binding = GrpcBinding(pipeline, base_url)
            grpc_server, bound = await start_server(
                binding, config.grpc_host, config.grpc_port, tls
            )
            versions = [spec.version.value for spec in GRPC_SERVICES]
            interfaces.add(TransportProtocol.GRPC, versions, port=bound, tls=tls is not None)
        readiness.started = True
        yield
        readiness.stopping = True
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
    routes.extend(probe_routes(readiness))
    routes.extend(guarded_routes(agent.routes, authenticator))
    hosts = config.answered_hosts()
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers=HTTP_ERROR_HANDLERS,
        middleware=[
            *(
                [Middleware(HostCheck, hosts=hosts, refusal=HOST_REFUSED, exempt=PROBE_PATHS)]
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
    app.state.config = config
    app.state.readiness = readiness
    return app


HOST_REFUSED = (
    "This agent does not answer to the Host this request names. Its operator can allow the"
    " name (accord serve --allowed-host NAME; create_app(allowed_hosts=[...])) or give the"
    " agent its public URL (--public-url URL)."
)
