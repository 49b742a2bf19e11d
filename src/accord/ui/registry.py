"""The registry the UI's Agents page shows and searches (`accord ui --registry URL`): its
searches relayed to the registry's HTTP API; agents found are added as any other, by URL."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from accord.client.registry import RegistryClient
from accord.errors import A2AClientError

REGISTRY_ROUTE = "/api/registry"


def registry_routes(registry_url: str | None) -> list[Route]:
    """`GET /api/registry?q=...&tag=...`: a page of the registry's search (`{"registry": URL,
    "agents": [...], "total": N}`; `"registry": null` when the UI was given none)."""

    async def search(request: Request) -> JSONResponse:
        if registry_url is None:
            return JSONResponse({"registry": None, "agents": [], "total": 0})
        query = request.query_params.get("q", "")
        filters: dict[str, list[str]] = {}
        for name, value in request.query_params.multi_items():
            if name != "q":
                filters.setdefault(name, []).append(value)
        try:
            async with RegistryClient(registry_url) as registry:
                page = await registry.search(query, dict(filters))
        except A2AClientError as exc:
            return JSONResponse({"error": str(exc)}, status_code=502)
        return JSONResponse({"registry": registry_url, **page})

    return [Route(REGISTRY_ROUTE, search)]
