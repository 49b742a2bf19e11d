"""Authenticating a request to routes of an agent's own (a host's or a registry's management
API) with an `Authenticator`, a refusal being an HTTP status with its reason."""

from __future__ import annotations

from starlette.requests import Request

from accord.core import Inbound, Principal
from accord.errors import A2AError, Unauthenticated
from accord.server.pipeline import Authenticator


class RouteRefused(Exception):
    """A request a route does not answer: the HTTP `status`, the reason and a challenge."""

    def __init__(self, reason: str, status: int, challenge: str | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.challenge = challenge


async def authenticated(authenticator: Authenticator, request: Request) -> Principal:
    """Who sends `request`, as `authenticator` says; RouteRefused (401 with a challenge when
    credentials are missing or wrong, 403 otherwise) when it refuses."""
    inbound = Inbound(
        "HTTP",
        f"{request.method} {request.url.path}",
        request.headers,
        dict(request.query_params),
        request.client.host if request.client else None,
    )
    try:
        return await authenticator.authenticate(inbound)
    except Unauthenticated as exc:
        challenge = exc.challenges[0] if exc.challenges else None
        raise RouteRefused(exc.message, 401, challenge) from None
    except A2AError as exc:
        raise RouteRefused(exc.message, 403) from None
