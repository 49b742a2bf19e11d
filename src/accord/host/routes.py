"""The host's management API: list, add and remove the agents it knows, over HTTP."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from accord.host.registry import AgentRegistry, RegistryError

AGENTS_PATH = "/host/agents"


def registry_routes(registry: AgentRegistry) -> list[Route]:
    """`GET /host/agents` (the list, credentials named but never shown), `POST /host/agents`
    with `{"url": ..., "credentials"?: {...}}` (201 with the entry, 400 with `{"error": ...}`
    when no usable agent answers there) and
    `DELETE /host/agents?url=...` (204)."""

    async def agents(request: Request) -> Response:
        try:
            if request.method == "GET":
                return JSONResponse([agent.entry() for agent in await registry.agents()])
            if request.method == "POST":
                added = await registry.add(*await requested_agent(request))
                return JSONResponse(added.entry(), status_code=201)
            url = request.query_params.get("url")
            if url is None:
                raise RegistryError("name the agent to remove: DELETE /host/agents?url=URL")
            await registry.remove(url)
            return Response(status_code=204)
        except RegistryError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)

    return [Route(AGENTS_PATH, agents, methods=["GET", "POST", "DELETE"])]


async def requested_agent(request: Request) -> tuple[object, object]:
    """The `url` and `credentials` of a JSON body `{"url": ..., "credentials"?: {...}}`;
    RegistryError when the body is not one."""
    try:
        body = json.loads(await request.body())
    except ValueError:
        raise RegistryError('send a JSON body: {"url": "http://host:port"}') from None
    if not isinstance(body, dict) or "url" not in body:
        raise RegistryError('send a JSON object with the agent\'s URL: {"url": "http://host:port"}')
    return body["url"], body.get("credentials")
