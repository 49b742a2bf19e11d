"""Who may change the registry: a caller its `Security` authenticates holding the curator scope
(searching is public, or, when it is not, guarded with the agent's routes)."""

from __future__ import annotations

from starlette.requests import Request

from accord.auth import Security, SecurityAuthenticator
from accord.core import Principal
from accord.server.route_auth import RouteRefused, authenticated
from accord.web.same_origin import foreign_origin

CURATOR_SCOPE = "registry:curate"
"""The scope a caller needs to add, remove and re-check agents."""


class Curators:
    """Who may change the registry over HTTP: a caller `security` authenticates with
    CURATOR_SCOPE (nobody, without a `security`), in a request from no other origin
    (`Origin`, `Sec-Fetch-Site`), so a page elsewhere cannot send one with a user's browser."""

    def __init__(self, security: Security | None = None) -> None:
        self.authenticator = SecurityAuthenticator(security) if security is not None else None

    async def curator(self, request: Request) -> Principal:
        """The curator sending `request`; RouteRefused unless it may change the registry."""
        why = foreign_origin(request.headers)
        if why is not None:
            raise RouteRefused(why, 403)
        if self.authenticator is None:
            raise RouteRefused(
                "this registry is not changed over HTTP: serve it with a Security granting"
                f" the scope {CURATOR_SCOPE} (accord registry serve --curator-token)",
                403,
            )
        principal = await authenticated(self.authenticator, request)
        if CURATOR_SCOPE not in principal.scopes:
            raise RouteRefused(f"changing the registry needs the scope {CURATOR_SCOPE}", 403)
        return principal
