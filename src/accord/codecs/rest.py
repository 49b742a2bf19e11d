"""The HTTP+JSON face of a protocol version: its routes; errors as `google.rpc.Status` bodies."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pydantic_core import to_json

from accord.codecs.base import Method
from accord.codecs.error_details import error_data, error_details
from accord.codecs.error_names import error_of_type
from accord.codecs.error_statuses import error_status
from accord.codecs.v1_0 import A2A_JSON
from accord.codecs.versions import ProtocolVersion
from accord.errors import (
    A2AError,
    InternalError,
    InvalidParams,
    MethodNotFound,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
)
from accord.types import JSONRPCError

JSON_MEDIA_TYPES = ("application/json", A2A_JSON)
"""The request body types an HTTP+JSON route reads (either version)."""


@dataclass(frozen=True, slots=True)
class RestRoute:
    """One HTTP+JSON operation: its HTTP verbs, its path and the codec `Method` it runs.

    `path` is relative to the version's prefix. A path parameter `{field}` is one path segment
    without `:` (which starts a custom verb, as in `/tasks/{id}:cancel`); `{field:str}` is any
    one segment. The method decodes one object holding the request's fields: the JSON body of
    a POST, or the query parameters of a GET or DELETE, with the path parameters over them.
    """

    verbs: tuple[str, ...]
    path: str
    name: str
    method: Method


@dataclass(frozen=True, slots=True)
class RestCodec:
    """The HTTP+JSON routes of one protocol version and how its responses are typed.

    Every route is served under `prefix`; with `tenants`, also under `/{tenant}` (the tenant
    goes to the service in the CallContext). `hint` ends a VersionNotSupported message with
    where the routes of the other version are. `error_members` gives an error body's members
    beside its `google.rpc.Status` (see `status_body`).
    """

    version: ProtocolVersion
    prefix: str
    tenants: bool
    media_type: str
    routes: tuple[RestRoute, ...]
    hint: str = ""
    error_members: Callable[[A2AError], dict[str, Any]] | None = None

    def route(self, name: str) -> RestRoute:
        """The route running the operation called `name`."""
        return next(route for route in self.routes if route.name == name)


def http_status(error: A2AError) -> tuple[int, str]:
    """The HTTP+JSON status of `error` and the google.rpc.Code name its body carries."""
    status = error_status(error)
    return status.http, status.grpc


def status_body(error: A2AError, http: int, status: str, codec: RestCodec | None = None) -> bytes:
    """`error` as the JSON of a `google.rpc.Status` (AIP-193), with an ErrorInfo for A2A errors.

    `code` is the HTTP status, `status` the google.rpc.Code name, `details` ProtoJSON `Any`s.
    The `error_members` of `codec` (the version answering) go beside `error`.
    """
    body = {
        "error": {
            "code": http,
            "status": status,
            "message": error.message,
            "details": error_details(error),
        }
    }
    if codec is not None and codec.error_members is not None:
        body.update(codec.error_members(error))
    return to_json(body)


# --- the client's direction ------------------------------------------------------------------

_PATH_FIELD = re.compile(r"\{(\w+)(?::\w+)?\}")


@dataclass(frozen=True, slots=True)
class RestRequest:
    """An HTTP+JSON request a client sends: verb, path (below the interface URL), query, body."""

    verb: str
    path: str
    query: dict[str, str]
    body: dict[str, Any] | None


def rest_request(route: RestRoute, fields: dict[str, Any] | None) -> RestRequest:
    """The request running `route` with the request `fields` (as its method decodes them).

    The path takes its fields; the rest go in the JSON body of a POST, or the query of a GET
    or DELETE (lists as repeated parameters are not needed by any route; booleans as JSON).
    """
    rest = dict(fields or {})

    def fill(match: re.Match[str]) -> str:
        return quote(str(rest.pop(match[1])), safe="")

    path = _PATH_FIELD.sub(fill, route.path)
    verb = route.verbs[-1] if "POST" in route.verbs else route.verbs[0]
    if verb == "POST":
        return RestRequest("POST", path, {}, rest)
    query = {k: to_json(v).decode().strip('"') for k, v in rest.items()}
    return RestRequest(verb, path, query, None)


_BY_STATUS: dict[str, type[A2AError]] = {
    "INVALID_ARGUMENT": InvalidParams,
    "UNAUTHENTICATED": Unauthenticated,
    "PERMISSION_DENIED": PermissionDenied,
    "NOT_FOUND": MethodNotFound,
    "UNIMPLEMENTED": MethodNotFound,
    "RESOURCE_EXHAUSTED": RateLimited,
    "INTERNAL": InternalError,
}


_STATUS_OF_HTTP = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",
    429: "RESOURCE_EXHAUSTED",
    501: "UNIMPLEMENTED",
}


def error_from_body(body: Any, http: int) -> A2AError | None:
    """The A2AError an HTTP+JSON error body of any server stands for (None: none is said).

    Read in turn: a `google.rpc.Status` (`error_from_status`), a 0.3 error `type` name, a
    JSON-RPC `code`, and last a bare `message`, whose HTTP status `http` says the error.
    """
    found = error_from_status(body)
    if found is not None or not isinstance(body, dict):
        return found
    message = body.get("message")
    if not isinstance(message, str):
        return None
    typed = error_of_type(body.get("type"), message)
    if typed is not None:
        return typed
    code = body.get("code")
    if isinstance(code, int) and not isinstance(code, bool) and code < 0:
        return A2AError.from_error_object(
            JSONRPCError(code=code, message=message, data=body.get("data"))
        )
    cls = _BY_STATUS.get(_STATUS_OF_HTTP.get(http, "INTERNAL"), InternalError)
    return cls(message)


def error_from_status(body: Any) -> A2AError | None:
    """The A2AError a `google.rpc.Status` body stands for (None: the body is not one).

    An ErrorInfo names the A2A error; without one, the status name says the generic error.
    """
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return None
    code, data = error_data(error.get("details"))
    if code is not None:
        found = JSONRPCError(code=code, message=error["message"], data=data)
        return A2AError.from_error_object(found)
    cls = _BY_STATUS.get(str(error.get("status")), InternalError)
    return cls(error["message"], data=data)
