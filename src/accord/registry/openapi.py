"""The OpenAPI 3.1 description of the registry's HTTP API (served at /registry/openapi.json)."""

from __future__ import annotations

from functools import cache
from typing import Any

from accord.registry.curators import CURATOR_SCOPE
from accord.registry.facets import FACETS
from accord.registry.search import DEFAULT_LIMIT, MAX_LIMIT, STATUSES

Json = dict[str, Any]


def _ref(name: str) -> Json:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: Json, description: str) -> Json:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _query(name: str, description: str, schema: Json, *, required: bool = False) -> Json:
    found = {"name": name, "in": "query", "description": description, "schema": schema}
    return found | ({"required": True} if required else {})


_ERROR = _json(_ref("Error"), "what is wrong, in words")
_CURATED = {
    "security": [{"curator": [CURATOR_SCOPE]}],
    "description": f"Needs a curator: a caller the registry authenticates with {CURATOR_SCOPE}.",
}
_URL = _query("url", "the card URL the agent was added by", {"type": "string"}, required=True)
_URL_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["url"],
                "properties": {"url": {"type": "string", "description": "a card or base URL"}},
            }
        }
    },
}


@cache
def openapi_document() -> Json:
    """The description (built once)."""
    search = [
        _query("q", "free text: name, description, skills and tags", {"type": "string"}),
        *(
            _query(
                facet,
                f"agents with this {facet.replace('_', ' ')} (repeatable)",
                {"type": "string"},
            )
            for facet in FACETS
        ),
        _query(
            "status",
            "agents that answer (up), do not (down), or any",
            {"enum": list(STATUSES), "default": STATUSES[0]},
        ),
        _query(
            "limit",
            "agents per page",
            {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
        ),
        _query("offset", "where the page starts", {"type": "integer", "minimum": 0}),
    ]
    return {
        "openapi": "3.1.0",
        "info": {"title": "accord registry", "version": "1"},
        "paths": {
            "/registry/agents": {
                "get": {
                    "summary": "Search the agents, best matches first",
                    "parameters": search,
                    "responses": {"200": _json(_ref("Page"), "a page of agents"), "400": _ERROR},
                },
                "post": {
                    "summary": "Add an agent by its card URL (fetched, checked, kept)",
                    **_CURATED,
                    "requestBody": _URL_BODY,
                    "responses": {
                        "201": _json(_ref("Agent"), "added"),
                        "200": _json(_ref("Agent"), "kept already: checked again"),
                        "401": _ERROR,
                        "403": _ERROR,
                        "422": _json(_ref("Rejection"), "the card is refused, with reasons"),
                    },
                },
                "delete": {
                    "summary": "Remove an agent",
                    **_CURATED,
                    "parameters": [_URL],
                    "responses": {"200": _json(_ref("Agent"), "removed"), "404": _ERROR},
                },
            },
            "/registry/agent": {
                "get": {
                    "summary": "An agent and the history of its card, newest first",
                    "parameters": [_URL],
                    "responses": {"200": _json(_ref("AgentHistory"), "found"), "404": _ERROR},
                }
            },
            "/registry/refresh": {
                "post": {
                    "summary": "Check one agent's card again (or every agent's: no url)",
                    **_CURATED,
                    "responses": {"200": _json(_ref("Checked"), "what each check found")},
                }
            },
        },
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {"curator": {"type": "http", "scheme": "bearer"}},
        },
    }


def _schemas() -> Json:
    text, card = {"type": "string"}, {"type": "object", "description": "the card as served"}
    return {
        "Error": {"type": "object", "required": ["error"], "properties": {"error": text}},
        "Rejection": {
            "type": "object",
            "properties": {"error": text, "reasons": {"type": "array", "items": text}},
        },
        "Agent": {
            "type": "object",
            "required": ["url", "status", "revision", "card"],
            "properties": {
                "url": text,
                "name": text,
                "description": text,
                "status": {"enum": ["up", "down"]},
                "revision": {"type": "integer"},
                "signedBy": text,
                "addedAt": text,
                "changedAt": text,
                "checkedAt": text,
                "rank": {"type": "number"},
                "card": card,
            },
        },
        "Page": {
            "type": "object",
            "properties": {
                "agents": {"type": "array", "items": _ref("Agent")},
                "total": {"type": "integer"},
                "nextOffset": {"type": "integer"},
                "query": {"type": "object"},
            },
        },
        "AgentHistory": {
            "type": "object",
            "properties": {
                "agent": _ref("Agent"),
                "history": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "event": text,
                            "at": text,
                            "revision": {"type": "integer"},
                            "detail": text,
                            "card": card,
                        },
                    },
                },
            },
        },
        "Checked": {
            "type": "object",
            "properties": {"checked": {"type": "object", "additionalProperties": text}},
        },
    }
