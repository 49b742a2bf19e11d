"""UiAccess: who may use the UI — the Host names it answers to, a login beyond loopback, and
its API only from its own pages (a session token they hold, JSON, no other origin); the
headers every answer carries (a Content-Security-Policy without inline script, no framing)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from accord.web.allowed_hosts import AllowedHosts
from accord.web.bearer import bearer_token, same_secret
from accord.web.same_origin import foreign_origin

SESSION_HEADER = "X-Accord-Session"
"""The header the pages send the session token in (the event stream: `?session=`)."""
LOGIN_COOKIE = "accord_ui_login"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data: http: https:; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
"""Scripts and styles only from the UI's own files (no inline script, no handler attribute);
pictures an agent sends from the web or inline; no page may frame the UI."""
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]
SAFE_METHODS = ("GET", "HEAD")


@dataclass
class UiAccess:
    """The UI's checks (`AccessCheck` applies them): a request whose `Host` is not in `hosts`
    gets 400 (a page whose name rebinds to this machine reads nothing); with `login_token`,
    every request needs it (the `?token=` of the URL printed at start, kept in a cookie, or
    `Authorization: Bearer`); the API (`/api/`, `/ui/events`) answers only requests with the
    `session` token the pages hold (`GET /api/session` gives it to a script), naming no other
    origin, their bodies JSON."""

    hosts: AllowedHosts = field(default_factory=AllowedHosts.loopback)
    login_token: str | None = None
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def refusal(self, scope: Scope) -> Response | None:
        """What to answer instead of the app, or None when the request may go on."""
        headers = Headers(scope=scope)
        if not self.hosts.allows(headers.get("host", "")):
            return PlainTextResponse(
                "This UI does not answer to the Host this request names (see --allowed-host).",
                status_code=400,
            )
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if self.login_token is not None:
            given = query.get("token")
            if (
                given is not None
                and scope["method"] in SAFE_METHODS
                and same_secret(given, self.login_token)
            ):
                return _logged_in(scope, query, self.login_token)
            if not self._logged_in(headers):
                return PlainTextResponse(
                    "Log in: open the URL with ?token=... that `accord ui` printed at start.",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="accord ui"'},
                )
        path: str = scope["path"]
        if not (path.startswith("/api/") or path == "/ui/events"):
            return None
        why = foreign_origin(headers)
        if why is not None:
            return _refused(403, why)
        if path == "/api/session" and scope["method"] in SAFE_METHODS:
            return None
        session = (
            query.get("session", "") if path == "/ui/events" else headers.get(SESSION_HEADER, "")
        )
        if not same_secret(session, self.session):
            return _refused(403, f"send the page's session token ({SESSION_HEADER})")
        if scope["method"] not in SAFE_METHODS and scope["method"] != "DELETE":
            media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if media_type != "application/json":
                return _refused(415, "send the body as JSON (Content-Type: application/json)")
        return None

    def _logged_in(self, headers: Headers) -> bool:
        assert self.login_token is not None
        token = bearer_token(headers.get("authorization", ""))
        if token is not None and same_secret(token, self.login_token):
            return True
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header logs nobody in
            return False
        morsel = cookie.get(LOGIN_COOKIE)
        return morsel is not None and same_secret(morsel.value, self.login_token)


class AccessCheck:
    """ASGI middleware: HTTP requests `access` refuses get its answer; every answer gets the
    SECURITY_HEADERS."""

    def __init__(self, app: ASGIApp, access: UiAccess) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        refusal = self.access.refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send_with_headers)
        else:
            await self.app(scope, receive, send_with_headers)


def _logged_in(scope: Scope, query: dict[str, str], token: str) -> Response:
    """To the same page without the token in its URL, the login kept in a cookie."""
    rest = urlencode({k: v for k, v in query.items() if k != "token"})
    path = "/" + str(scope["path"]).lstrip("/")  # never `//host`: no redirect off the UI
    response = RedirectResponse(path + (f"?{rest}" if rest else ""), status_code=303)
    response.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict")
    return response


def _refused(status: int, reason: str) -> Response:
    return JSONResponse({"error": reason}, status_code=status)
