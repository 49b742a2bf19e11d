"""The registry's HTTP API: search, show, add, remove and re-check agents (docs/registry.md;
its OpenAPI description at `/registry/openapi.json`)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from accord.registry.checks import CardRejected, CardUnreachable
from accord.registry.curators import Curators
from accord.registry.facets import FACETS
from accord.registry.openapi import openapi_document
from accord.registry.search import SearchError, SearchQuery
from accord.registry.service import Registry, UnknownAgent
from accord.server.route_auth import RouteRefused

PREFIX = "/registry"
MAX_BODY_BYTES = 16 * 1024
Handler = Callable[[Request], Awaitable[Response]]


def registry_routes(registry: Registry, curators: Curators) -> list[Route]:
    """The routes of the HTTP API on `registry`, changes allowed to `curators`."""

    async def agents(request: Request) -> Response:
        if request.method == "GET":
            page = await registry.search(search_query(request.query_params.multi_items()))
            return JSONResponse(page.to_json())
        await curators.curator(request)
        if request.method == "POST":
            url = _url_in(await _body(request))
            known = await registry.find(url)
            added = await registry.add(url)
            return JSONResponse(added.to_json(), status_code=200 if known else 201)
        removed = await registry.remove(_url_param(request))
        return JSONResponse(removed.to_json())

    async def agent(request: Request) -> Response:
        found, changes = await registry.show(_url_param(request))
        return JSONResponse(
            {"agent": found.to_json(), "history": [change.to_json() for change in changes]}
        )

    async def refresh(request: Request) -> Response:
        await curators.curator(request)
        body = await _body(request)
        if "url" in body:
            found = await registry.find(_url_in(body))
            if found is None:
                raise UnknownAgent(f"no agent is kept under {body['url']}")
            return JSONResponse({"checked": {found.url: await registry.refresh(found.url)}})
        return JSONResponse({"checked": await registry.refresh_all()})

    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_document())

    return [
        Route(f"{PREFIX}/agents", _answering(agents), methods=["GET", "POST", "DELETE"]),
        Route(f"{PREFIX}/agent", _answering(agent), methods=["GET"]),
        Route(f"{PREFIX}/refresh", _answering(refresh), methods=["POST"]),
        Route(f"{PREFIX}/openapi.json", openapi, methods=["GET"]),
    ]


def search_query(items: list[tuple[str, str]]) -> SearchQuery:
    """The search that query parameters ask for: `q`, each facet of FACETS (repeatable),
    `status`, `limit`, `offset`; SearchError naming what is wrong."""
    filters: dict[str, list[str]] = {}
    options: dict[str, Any] = {}
    for name, value in items:
        if name in FACETS:
            filters.setdefault(name, []).append(value)
        elif name == "q":
            options["text"] = value
        elif name == "status":
            options["status"] = value
        elif name in ("limit", "offset"):
            if not value.isdigit():
                raise SearchError(f"{name} is a whole number, not {value!r}")
            options[name] = int(value)
        else:
            known = ", ".join(["q", *FACETS, "status", "limit", "offset"])
            raise SearchError(f"unknown parameter {name!r}: a search takes {known}")
    return SearchQuery(filters=filters, **options)


def _answering(handler: Handler) -> Handler:
    """`handler` with the registry's errors answered as JSON `{"error": ..., ...}`."""

    async def answer(request: Request) -> Response:
        try:
            return await handler(request)
        except RouteRefused as exc:
            headers = {"WWW-Authenticate": exc.challenge} if exc.challenge else None
            return JSONResponse({"error": str(exc)}, status_code=exc.status, headers=headers)
        except CardRejected as exc:
            body = {"error": str(exc), "reasons": exc.reasons}
            return JSONResponse(body, status_code=422)
        except CardUnreachable as exc:
            return JSONResponse({"error": f"no card could be fetched: {exc}"}, status_code=422)
        except UnknownAgent as exc:
            return JSONResponse({"error": str(exc.args[0])}, status_code=404)
        except (SearchError, _BadRequest) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)

    return answer


class _BadRequest(ValueError):
    """A request the API cannot read; the message says what to send."""


async def _body(request: Request) -> dict[str, Any]:
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise _BadRequest("send the body as JSON (Content-Type: application/json)")
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise _BadRequest(f"the body is larger than {MAX_BODY_BYTES // 1024} KiB")
    try:
        document = json.loads(body or b"{}")
    except ValueError:
        raise _BadRequest('send a JSON object: {"url": "http://host:port"}') from None
    if not isinstance(document, dict):
        raise _BadRequest('send a JSON object: {"url": "http://host:port"}')
    return document


def _url_in(body: dict[str, Any]) -> str:
    url = body.get("url")
    if not isinstance(url, str) or not url.strip():
        raise _BadRequest('name the agent\'s card URL: {"url": "http://host:port"}')
    return url.strip()


def _url_param(request: Request) -> str:
    url = request.query_params.get("url", "").strip()
    if not url:
        raise _BadRequest(f"name the agent: {request.url.path}?url=CARD_URL")
    return url
