"""UiApi: the UI's JSON API and its stream of changes, one method per route."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from accord.client.credential_settings import credentials_from_settings, described
from accord.client.transports import TRANSPORTS
from accord.codecs.card import InvalidCard, read_card
from accord.codecs.interfaces import (
    card_interfaces,
    implied_interfaces,
    interface_key,
    interface_version,
)
from accord.types import AgentInterface
from accord.ui.access import SESSION_HEADER, UiAccess
from accord.ui.agent_tasks import fetch_agent_task, list_agent_tasks
from accord.ui.agents import AgentRefused, HostLink, load_agent, refresh_host, register_with_host
from accord.ui.attachments import AttachmentRefused, file_part
from accord.ui.requests import (
    BadRequest,
    agent_param,
    credentials_given,
    json_body,
    secrets_sent,
    text,
)
from accord.ui.state import AgentEntry, UiState
from accord.ui.talk import Talker

KEEP_ALIVE_SECONDS = 15.0


class UiApi:
    """The routes under `/api` and `/ui/events`, on the UI's state, its `Talker` and, if any,
    the accord host agents added are registered with."""

    def __init__(
        self, state: UiState, talker: Talker, host: HostLink | None, access: UiAccess
    ) -> None:
        self.state = state
        self.talker = talker
        self.host = host
        self.access = access

    def routes(self) -> list[Route]:
        return [
            Route("/ui/events", self.events),
            Route("/api/state", self.snapshot),
            Route("/api/session", self.session),
            Route("/api/send", self.send, methods=["POST"]),
            Route("/api/agents", self.add_agent, methods=["POST"]),
            Route("/api/agents", self.remove_agent, methods=["DELETE"]),
            Route("/api/inspect", self.inspect, methods=["POST"]),
            Route("/api/cancel", self.cancel, methods=["POST"]),
            Route("/api/agent-tasks", self.agent_tasks),
            Route("/api/agent-task", self.agent_task),
        ]

    async def events(self, request: Request) -> StreamingResponse:
        """The state as the stream starts (of the task `task`, if named), then each change."""
        hub = self.state.hub
        queue = hub.subscribe()
        snapshot = self.state.snapshot(request.query_params.get("task"))

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
                hub.unsubscribe(queue)

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def snapshot(self, request: Request) -> JSONResponse:
        return JSONResponse(self.state.snapshot(request.query_params.get("task")))

    async def session(self, request: Request) -> JSONResponse:
        return JSONResponse({"session": self.access.session, "header": SESSION_HEADER})

    async def send(self, request: Request) -> JSONResponse:
        """A message to an agent, in a conversation (a new one unless named): 202, the turn
        going on in the background."""
        body = await json_body(request)
        agent = text(body, "agent")
        if not agent:
            raise BadRequest("say which agent to talk to: `agent` is its URL")
        said = text(body, "text")
        data = body.get("data")
        if data is not None and not isinstance(data, dict):
            raise BadRequest("`data` must be a JSON object")
        try:
            file = file_part(body["file"]) if body.get("file") is not None else None
        except AttachmentRefused as exc:
            raise BadRequest(str(exc)) from None
        if not said and data is None and file is None:
            raise BadRequest(
                "the message is empty: write something, attach a file or fill in the form"
            )
        conversation = self.state.conversation(
            text(body, "conversation") or None,
            agent,
            transport=text(body, "transport") or None,
            version=text(body, "version") or None,
        )
        secrets = secrets_sent(body, data)
        task_id = text(body, "taskId") or None
        turn = self.talker.send(conversation, said, data, task_id, file, secrets)
        return JSONResponse({"conversation": conversation.id, "turn": turn.id}, status_code=202)

    async def add_agent(self, request: Request) -> JSONResponse:
        """The agent at `url` added (and registered with the host, if any)."""
        body = await json_body(request)
        url = text(body, "url").strip()
        if not url:
            raise BadRequest("give the agent's URL")
        settings = credentials_given(body)
        agent = await self._agent_with_credentials(url, settings)
        self.state.add_agent(agent)
        registered = []
        host = self.host
        if host is not None and not host.is_host(agent.url):
            refusal = await register_with_host(self.talker.http, host, agent.url, settings)
            known = self.state.agents.get(host.url)
            name = known.name if known is not None else host.url
            registered.append({"host": host.url, "name": name, "error": refusal})
            await refresh_host(self.talker.http, self.state, host)
        return JSONResponse({"agent": agent.to_json(), "hosts": registered}, status_code=201)

    async def remove_agent(self, request: Request) -> Response:
        self.state.remove_agent(request.query_params.get("url", ""))
        return Response(status_code=204)

    async def inspect(self, request: Request) -> JSONResponse:
        """The agent at `url` and its card's interfaces, without adding it."""
        body = await json_body(request)
        url = text(body, "url").strip()
        agent = await self._agent_with_credentials(url, credentials_given(body))
        return JSONResponse({**agent.to_json(), "interfaces": _interfaces(agent.card)})

    async def cancel(self, request: Request) -> JSONResponse:
        body = await json_body(request)
        agent, task_id = text(body, "agent"), text(body, "task")
        if not agent or not task_id:
            raise BadRequest("say which task to cancel: `agent` is its agent's URL, `task` its id")
        task = await self.talker.cancel(agent, task_id)
        return JSONResponse({"task": task.to_wire()})

    async def agent_tasks(self, request: Request) -> JSONResponse:
        """A page of the agent's own tasks (ListTasks)."""
        client = self.talker.client_for(agent_param(request))
        await self.talker.checked(client)
        page = await list_agent_tasks(client, request.query_params.get("pageToken"))
        return JSONResponse(page)

    async def agent_task(self, request: Request) -> JSONResponse:
        """One of the agent's own tasks (GetTask)."""
        task_id = request.query_params.get("id", "")
        if not task_id:
            raise BadRequest("say which task: `id`")
        client = self.talker.client_for(agent_param(request))
        await self.talker.checked(client)
        return JSONResponse(await fetch_agent_task(client, task_id))

    async def _agent_with_credentials(
        self, url: str, settings: dict[str, str] | None
    ) -> AgentEntry:
        """The agent at `url`, its card loaded, given the credentials `settings` (None: those
        it was given before); BadRequest saying why when it cannot be loaded."""
        try:
            agent = await load_agent(self.talker.http, url, self.host)
        except AgentRefused as exc:
            raise BadRequest(str(exc)) from None
        if settings is None:
            known = self.state.agents.get(agent.url)
            agent.credentials = known.credentials if known is not None else []
        else:
            await self.talker.set_credentials(agent.url, credentials_from_settings(settings))
            agent.credentials = described(settings)
        return agent


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


def _sse(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
