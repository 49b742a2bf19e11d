"""The host's management API: list, add and remove the agents it knows, over HTTP."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from accord.host.curators import CuratorRefused, Curators
from accord.host.registry import AgentRegistry, RegistryError

AGENTS_PATH = "/host/agents"
OPERATOR_SETTINGS = ("cert", "key", "ca")
"""Credentials naming files on the host's machine: the operator's to configure, never the API's."""
MAX_BODY_BYTES = 64 * 1024


def registry_routes(registry: AgentRegistry, curators: Curators | None = None) -> list[Route]:
    """`GET /host/agents` (the list, credentials named but never shown), `POST /host/agents`
    with `{"url": ..., "credentials"?: {...}}` (201 with the entry, 400 with `{"error": ...}`
    when no usable agent answers there) and `DELETE /host/agents?url=...` (204); changes
    only by the `curators` (default: `Curators()`, the token of `ACCORD_HOST_TOKEN`)."""
    curators = curators if curators is not None else Curators()

    async def agents(request: Request) -> Response:
        try:
            if request.method == "GET":
                return JSONResponse([agent.entry() for agent in await registry.agents()])
            await curators.check(request)
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
        except CuratorRefused as exc:
            headers = {"WWW-Authenticate": exc.challenge} if exc.challenge else None
            return JSONResponse({"error": str(exc)}, status_code=exc.status, headers=headers)

    return [Route(AGENTS_PATH, agents, methods=["GET", "POST", "DELETE"])]


async def requested_agent(request: Request) -> tuple[object, object]:
    """The `url` and `credentials` of a JSON body `{"url": ..., "credentials"?: {...}}`;
    RegistryError when the body is not one, or its credentials name files."""
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise RegistryError(f"the body is larger than {MAX_BODY_BYTES // 1024} KiB")
    try:
        document = json.loads(body)
    except ValueError:
        raise RegistryError('send a JSON body: {"url": "http://host:port"}') from None
    if not isinstance(document, dict) or "url" not in document:
        raise RegistryError('send a JSON object with the agent\'s URL: {"url": "http://host:port"}')
    credentials = document.get("credentials")
    if isinstance(credentials, dict):
        named = [key for key in OPERATOR_SETTINGS if key in credentials]
        if named:
            raise RegistryError(
                f"credentials: {', '.join(named)} name files on the host's machine; certificates"
                " for remote agents are configured by the operator (ACCORD_HOST_CREDENTIALS),"
                " not over HTTP"
            )
    return document["url"], credentials
