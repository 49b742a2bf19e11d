"""Curators: who may add and remove the host's agents over HTTP, and requests only a script or
the host's own page could have sent (JSON, from no other origin)."""

from __future__ import annotations

import os

from starlette.requests import Request

from accord.server.pipeline import Authenticator
from accord.server.route_auth import RouteRefused, authenticated
from accord.web.bearer import bearer_token, same_secret
from accord.web.same_origin import foreign_origin

TOKEN_VARIABLE = "ACCORD_HOST_TOKEN"
"""The token that lets a caller add and remove the host's agents (`Authorization: Bearer`)."""
CURATOR_SCOPE = "host:curate"
"""The scope a caller authenticated by the host's own `Security` needs to change its agents."""


CuratorRefused = RouteRefused
"""A request that may not change the host's agents; `status` and the reason to answer."""


class Curators:
    """Who may change the host's agents: whoever presents `token` as a bearer token, and, for a
    host declaring a `Security`, a caller it authenticates holding CURATOR_SCOPE. With
    neither, nobody may over HTTP (the agents are then the operator's: `--agent`, the file).

    Every change must also be a JSON body (for POST) and name no other origin (`Origin`,
    `Sec-Fetch-Site`), so a page elsewhere cannot send one with the user's browser."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token if token is not None else os.environ.get(TOKEN_VARIABLE) or None

    async def check(self, request: Request) -> None:
        """CuratorRefused unless `request` may change the host's agents."""
        check_same_origin(request)
        if request.method == "POST" and not is_json(request):
            raise CuratorRefused("send the body as JSON (Content-Type: application/json)", 415)
        given = bearer_token(request.headers.get("authorization", ""))
        if self.token is not None and given is not None and same_secret(given, self.token):
            return
        pipeline = getattr(request.app.state, "pipeline", None)
        authenticator: Authenticator | None = getattr(pipeline, "authenticator", None)
        if authenticator is not None:  # the host's Security (or the app's authenticator)
            principal = await authenticated(authenticator, request)
            if CURATOR_SCOPE not in principal.scopes:
                raise CuratorRefused(f"changing the host's agents needs the scope {CURATOR_SCOPE}",
                                     403)  # fmt: skip
            return
        if self.token is None:
            raise CuratorRefused(
                "this host's agents are not changed over HTTP: start it with a token"
                f" ({TOKEN_VARIABLE}; `accord host` makes one) or a Security with the scope"
                f" {CURATOR_SCOPE}",
                403,
            )
        raise CuratorRefused(
            "send the host's token: Authorization: Bearer TOKEN (printed by `accord host`)",
            401,
            'Bearer realm="host"',
        )


def check_same_origin(request: Request) -> None:
    """CuratorRefused (403) for a request a browser says came from another site or origin."""
    why = foreign_origin(request.headers)
    if why is not None:
        raise CuratorRefused(why, 403)


def is_json(request: Request) -> bool:
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media_type == "application/json"
