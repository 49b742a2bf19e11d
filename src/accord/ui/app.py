"""create_ui_app: the UI's Starlette app — its pages, its JSON API and one SSE stream of changes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from importlib import resources

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from accord.client.credential_settings import credentials_from_settings
from accord.ui.access import AccessCheck, UiAccess
from accord.ui.agents import AgentRefused, HostLink, load_agent
from accord.ui.api import UiApi
from accord.ui.attachments import MAX_FILE_BYTES
from accord.ui.registry import registry_routes
from accord.ui.requests import BadRequest
from accord.ui.state import HIDDEN, UiState
from accord.ui.talk import AgentCallFailed, Talker
from accord.web.webhook_guard import WebhookGuard

logger = logging.getLogger("accord.ui")

PAGES = {
    "chat": ("/", "Conversations"),
    "tasks": ("/tasks", "Tasks"),
    "task": ("/tasks/{task_id}", "Task"),
    "agents": ("/agents", "Agents"),
    "inspector": ("/inspector", "Inspector"),
}
"""Each page: its path and its title."""
STARTUP_ATTEMPTS = 30
STATIC = resources.files("accord.ui") / "static"


def create_ui_app(
    agent_urls: Sequence[str] = (),
    *,
    timeout: float = 60.0,
    host: HostLink | None = None,
    access: UiAccess | None = None,
    fetch_guard: WebhookGuard | None = None,
    registry: str | None = None,
    trace_url: str | None = None,
) -> Starlette:
    """The web UI, knowing the agents at `agent_urls` from the start (the first is the one
    conversations start with). `host` is the accord host agents added are registered with
    (and whose remote agents are shown); no other agent is taken for one. `access` says who
    may use the UI (default: `UiAccess()`, loopback Host names, no login); with `fetch_guard`,
    the UI fetches and calls no address it refuses (loopback, private, metadata...). The Agents
    page shows and searches the accord `registry` at that URL, if given. With `trace_url` (a
    trace viewer's URL with `{trace_id}` in it), a task's page links its trace."""
    state = UiState()
    state.trace_url = trace_url
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

    routes: list[BaseRoute] = [*_pages(access), *UiApi(state, talker, host, access).routes()]
    routes += registry_routes(registry)
    routes.append(Mount("/static", StaticFiles(directory=str(STATIC)), name="static"))
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={BadRequest: _bad_request, AgentCallFailed: _agent_failed},
        middleware=[Middleware(AccessCheck, access=access)],
    )
    app.state.ui = state
    return app


def _pages(access: UiAccess) -> list[Route]:
    """The routes of the pages: the one template, filled in for each page."""
    template = (STATIC / "page.html").read_text("utf-8")

    def page(name: str, title: str) -> Callable[[Request], Awaitable[HTMLResponse]]:
        html = (
            template.replace("{{page}}", name)
            .replace("{{title}}", title)
            .replace("{{maxFileBytes}}", str(MAX_FILE_BYTES))
            .replace("{{session}}", access.session)
            .replace("{{hidden}}", HIDDEN)
        )

        async def endpoint(request: Request) -> HTMLResponse:
            return HTMLResponse(html)

        return endpoint

    return [Route(path, page(name, title)) for name, (path, title) in PAGES.items()]


async def _bad_request(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse({"error": str(exc)}, status_code=400)


async def _agent_failed(request: Request, exc: Exception) -> JSONResponse:
    status = exc.status if isinstance(exc, AgentCallFailed) else 502
    return JSONResponse({"error": str(exc)}, status_code=status)


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
