"""create_ui_app: the UI's Starlette app — its pages, its JSON API and one SSE stream of changes."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from accord.client.credential_settings import (
    CredentialSettingsError,
    credential_settings,
    credentials_from_settings,
    described,
)
from accord.client.transports import TRANSPORTS
from accord.codecs.card import InvalidCard, read_card
from accord.codecs.interfaces import (
    card_interfaces,
    implied_interfaces,
    interface_key,
    interface_version,
)
from accord.types import AgentInterface
from accord.ui.access import SESSION_HEADER, AccessCheck, UiAccess
from accord.ui.agent_tasks import fetch_agent_task, list_agent_tasks
from accord.ui.agents import AgentRefused, HostLink, load_agent, refresh_host, register_with_host
from accord.ui.attachments import MAX_FILE_BYTES, AttachmentRefused, file_part
from accord.ui.state import AgentEntry, UiState
from accord.ui.talk import AgentCallFailed, Talker
from accord.web.webhook_guard import WebhookGuard

logger = logging.getLogger("accord.ui")

PAGES = {
    "chat": "Conversations",
    "tasks": "Tasks",
    "task": "Task",
    "agents": "Agents",
    "inspector": "Inspector",
}
KEEP_ALIVE_SECONDS = 15.0
STARTUP_ATTEMPTS = 30
STATIC = resources.files("accord.ui") / "static"
UI_CREDENTIALS = ("apiKey", "bearer", "basic")
"""What an agent may be given in the UI: an API key, a bearer token, a user and password."""


class BadRequest(Exception):
    """The page sent something the API cannot use; answered with HTTP 400 and the reason."""


def create_ui_app(
    agent_urls: Sequence[str] = (),
    *,
    timeout: float = 60.0,
    host: HostLink | None = None,
    access: UiAccess | None = None,
    fetch_guard: WebhookGuard | None = None,
) -> Starlette:
    """The web UI, knowing the agents at `agent_urls` from the start (the first is the one
    conversations start with). `host` is the accord host agents added are registered with
    (and whose remote agents are shown); no other agent is taken for one. `access` says who
    may use the UI (default: `UiAccess()`, loopback Host names, no login); with `fetch_guard`,
    the UI fetches and calls no address it refuses (loopback, private, metadata...)."""
    state = UiState()
    talker = Talker(state, timeout=timeout, guard=fetch_guard)
    access = access if access is not None else UiAccess()
    if host is not None and host.url not in [url.strip().rstrip("/") for url in agent_urls]:
        agent_urls = [host.url, *agent_urls]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if host is not None and host.token:  # a host that declares security takes its token
            await talker.set_credentials(
                host.url, credentials_from_settings({"bearer": host.token})
            )
        loading = asyncio.create_task(_load_agents(state, talker, agent_urls, host))
        yield
        loading.cancel()
        state.hub.close()
        await talker.aclose()

    template = (STATIC / "page.html").read_text("utf-8")

    def page(name: str) -> Callable[[Request], Awaitable[HTMLResponse]]:
        html = (
            template.replace("{{page}}", name)
            .replace("{{title}}", PAGES[name])
            .replace("{{maxFileBytes}}", str(MAX_FILE_BYTES))
            .replace("{{session}}", access.session)
        )

        async def endpoint(request: Request) -> HTMLResponse:
            return HTMLResponse(html)

        return endpoint

    async def events(request: Request) -> StreamingResponse:
        task_id = request.query_params.get("task")
        queue = state.hub.subscribe()
        snapshot = state.snapshot(task_id)

        async def stream() -> AsyncIterator[str]:
            try:
                yield _sse("snapshot", snapshot)
                while True:
                    try:
                        item = await asyncio.wait_for(queue.get(), KEEP_ALIVE_SECONDS)
                    except TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    if item is None:
                        return
                    yield _sse(*item)
            finally:
                state.hub.unsubscribe(queue)

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def send(request: Request) -> JSONResponse:
        body = await _json_body(request)
        agent = _text(body, "agent")
        if not agent:
            raise BadRequest("say which agent to talk to: `agent` is its URL")
        text = _text(body, "text")
        data = body.get("data")
        if data is not None and not isinstance(data, dict):
            raise BadRequest("`data` must be a JSON object")
        try:
            file = file_part(body["file"]) if body.get("file") is not None else None
        except AttachmentRefused as exc:
            raise BadRequest(str(exc)) from None
        if not text and data is None and file is None:
            raise BadRequest(
                "the message is empty: write something, attach a file or fill in the form"
            )
        conversation = state.conversation(
            _text(body, "conversation") or None,
            agent,
            transport=_text(body, "transport") or None,
            version=_text(body, "version") or None,
        )
        secret = body.get("secret") is True
        turn = talker.send(conversation, text, data, _text(body, "taskId") or None, file, secret)
        return JSONResponse({"conversation": conversation.id, "turn": turn.id}, status_code=202)

    async def add_agent(request: Request) -> JSONResponse:
        body = await _json_body(request)
        url = _text(body, "url").strip()
        if not url:
            raise BadRequest("give the agent's URL")
        settings = _credential_settings(body)
        agent = await agent_with_credentials(url, settings)
        state.add_agent(agent)
        registered = []
        if host is not None and not host.is_host(agent.url):
            refusal = await register_with_host(talker.http, host, agent.url, settings)
            known = state.agents.get(host.url)
            name = known.name if known is not None else host.url
            registered.append({"host": host.url, "name": name, "error": refusal})
            await refresh_host(talker.http, state, host)
        return JSONResponse({"agent": agent.to_json(), "hosts": registered}, status_code=201)

    async def remove_agent(request: Request) -> Response:
        state.remove_agent(request.query_params.get("url", ""))
        return Response(status_code=204)

    async def inspect(request: Request) -> JSONResponse:
        body = await _json_body(request)
        url = _text(body, "url").strip()
        agent = await agent_with_credentials(url, _credential_settings(body))
        return JSONResponse({**agent.to_json(), "interfaces": _interfaces(agent.card)})

    async def agent_with_credentials(url: str, settings: dict[str, str] | None) -> AgentEntry:
        """The agent at `url`, its card loaded, given the credentials `settings` (None: those
        it was given before); BadRequest saying why when it cannot be loaded."""
        try:
            agent = await load_agent(talker.http, url, host)
        except AgentRefused as exc:
            raise BadRequest(str(exc)) from None
        if settings is None:
            known = state.agents.get(agent.url)
            agent.credentials = known.credentials if known is not None else []
        else:
            await talker.set_credentials(agent.url, credentials_from_settings(settings))
            agent.credentials = described(settings)
        return agent

    async def cancel(request: Request) -> JSONResponse:
        body = await _json_body(request)
        agent, task_id = _text(body, "agent"), _text(body, "task")
        if not agent or not task_id:
            raise BadRequest("say which task to cancel: `agent` is its agent's URL, `task` its id")
        task = await talker.cancel(agent, task_id)
        return JSONResponse({"task": task.to_wire()})

    async def agent_tasks(request: Request) -> JSONResponse:
        client = talker.client_for(_agent_param(request))
        await talker.checked(client)
        return JSONResponse(await list_agent_tasks(client, request.query_params.get("pageToken")))

    async def agent_task(request: Request) -> JSONResponse:
        task_id = request.query_params.get("id", "")
        if not task_id:
            raise BadRequest("say which task: `id`")
        client = talker.client_for(_agent_param(request))
        await talker.checked(client)
        return JSONResponse(await fetch_agent_task(client, task_id))

    async def session(request: Request) -> JSONResponse:
        return JSONResponse({"session": access.session, "header": SESSION_HEADER})

    async def snapshot(request: Request) -> JSONResponse:
        return JSONResponse(state.snapshot(request.query_params.get("task")))

    async def bad_request(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=400)

    async def agent_failed(request: Request, exc: Exception) -> JSONResponse:
        status = exc.status if isinstance(exc, AgentCallFailed) else 502
        return JSONResponse({"error": str(exc)}, status_code=status)

    routes = [
        Route("/", page("chat")),
        Route("/tasks", page("tasks")),
        Route("/tasks/{task_id}", page("task")),
        Route("/agents", page("agents")),
        Route("/inspector", page("inspector")),
        Route("/ui/events", events),
        Route("/api/state", snapshot),
        Route("/api/session", session),
        Route("/api/send", send, methods=["POST"]),
        Route("/api/agents", add_agent, methods=["POST"]),
        Route("/api/agents", remove_agent, methods=["DELETE"]),
        Route("/api/inspect", inspect, methods=["POST"]),
        Route("/api/cancel", cancel, methods=["POST"]),
        Route("/api/agent-tasks", agent_tasks),
        Route("/api/agent-task", agent_task),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={BadRequest: bad_request, AgentCallFailed: agent_failed},
        middleware=[Middleware(AccessCheck, access=access)],
    )
    app.state.ui = state
    return app


async def _load_agents(
    state: UiState, talker: Talker, urls: Sequence[str], host: HostLink | None
) -> None:
    """Add the agents named at start, in order; those not up yet are tried again for a while
    (agents started beside the UI may take a few seconds to listen)."""
    pending = list(urls)
    for attempt in range(STARTUP_ATTEMPTS):
        failed = []
        for url in pending:
            try:
                state.add_agent(await load_agent(talker.http, url, host))
            except AgentRefused as exc:
                failed.append(url)
                if attempt == STARTUP_ATTEMPTS - 1:
                    logger.warning("accord ui: cannot add %s: %s", url, exc)
        if not failed:
            return
        pending = failed
        await asyncio.sleep(1.0)


def _interfaces(card: dict[str, Any]) -> list[dict[str, Any]]:
    """The card's interfaces, each saying whether accord speaks it, then those it implies
    (0.1 over JSON-RPC) marked `legacy`."""
    try:
        parsed = read_card(card)
    except InvalidCard:  # the checks say why
        return []

    def shown(interface: AgentInterface) -> dict[str, Any]:
        key = interface_key(interface)
        return {"transport": interface.transport, "version": interface_version(interface),
                "url": interface.url, "spoken": key is not None and key in TRANSPORTS}  # fmt: skip

    listed = [shown(interface) for interface in card_interfaces(parsed)]
    return listed + [{**shown(i), "legacy": True} for i in implied_interfaces(parsed)]


def _credential_settings(body: dict[str, Any]) -> dict[str, str] | None:
    """The `credentials` of a request (None when it gives none); BadRequest when unusable."""
    if body.get("credentials") is None:
        return None
    try:
        settings = credential_settings(body["credentials"])
    except CredentialSettingsError as exc:
        raise BadRequest(f"credentials: {exc}") from None
    other = [key for key in settings if key not in UI_CREDENTIALS]
    if other:
        raise BadRequest(f"credentials: the UI takes {', '.join(UI_CREDENTIALS)}, not {other[0]}")
    return settings


def _agent_param(request: Request) -> str:
    """The `agent` query parameter: the URL of the agent to ask."""
    agent = request.query_params.get("agent", "")
    if not agent:
        raise BadRequest("say which agent: `agent` is its URL")
    return agent


def _sse(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise BadRequest("the request body must be JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    return body


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name) or ""
    if not isinstance(value, str):
        raise BadRequest(f"`{name}` must be text")
    return value
