"""CollapseSlashes: routes `//message:send` as `/message:send` (repeated slashes collapsed)."""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Receive, Scope, Send

_REPEATED = re.compile(r"//+")


class CollapseSlashes:
    """ASGI middleware: `a//b` is routed as `a/b`.

    Clients that build a route by appending `/message:send` to an interface URL ending in `/`
    ask for `//message:send`; both forms are in use, and no A2A route has an empty segment.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and "//" in scope["path"]:
            scope = {**scope, "path": _REPEATED.sub("/", scope["path"])}
        await self.app(scope, receive, send)
