"""Who may change the registry: a caller its `Security` authenticates holding the curator scope
(searching is public, or, when it is not, guarded with the agent's routes)."""

from __future__ import annotations

from starlette.requests import Request

from accord.auth import Security, SecurityAuthenticator
from accord.core import Inbound, Principal
from accord.errors import A2AError, Unauthenticated
from accord.web.same_origin import foreign_origin

CURATOR_SCOPE = "registry:curate"
"""The scope a caller needs to add, remove and re-check agents."""


class Refused(Exception):
    """A request the registry does not answer: the HTTP `status`, the reason and a challenge."""

    def __init__(self, reason: str, status: int, challenge: str | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.challenge = challenge


class Curators:
    """Who may change the registry over HTTP: a caller `security` authenticates with
    CURATOR_SCOPE (nobody, without a `security`), in a request from no other origin
    (`Origin`, `Sec-Fetch-Site`), so a page elsewhere cannot send one with a user's browser."""

    def __init__(self, security: Security | None = None) -> None:
        self.authenticator = SecurityAuthenticator(security) if security is not None else None

    async def curator(self, request: Request) -> Principal:
        """The curator sending `request`; Refused unless it may change the registry."""
        why = foreign_origin(request.headers)
        if why is not None:
            raise Refused(why, 403)
        if self.authenticator is None:
            raise Refused(
                "this registry is not changed over HTTP: serve it with a Security granting"
                f" the scope {CURATOR_SCOPE} (accord registry serve --curator-token)",
                403,
            )
        principal = await self._authenticated(request)
        if CURATOR_SCOPE not in principal.scopes:
            raise Refused(f"changing the registry needs the scope {CURATOR_SCOPE}", 403)
        return principal

    async def _authenticated(self, request: Request) -> Principal:
        assert self.authenticator is not None
        inbound = Inbound(
            "HTTP",
            f"{request.method} {request.url.path}",
            request.headers,
            dict(request.query_params),
            request.client.host if request.client else None,
        )
        try:
            return await self.authenticator.authenticate(inbound)
        except Unauthenticated as exc:
            challenge = exc.challenges[0] if exc.challenges else None
            raise Refused(exc.message, 401, challenge) from None
        except A2AError as exc:
            raise Refused(exc.message, 403) from None
