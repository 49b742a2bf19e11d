"""GuardedTransport: an httpx transport that connects only where a WebhookGuard allows."""

from __future__ import annotations

import httpx

from accord.web.webhook_guard import WebhookGuard, WebhookRefused


class FetchRefused(httpx.TransportError):
    """A request the guard refused before connecting; the message says why."""


class GuardedTransport(httpx.AsyncBaseTransport):
    """Each request's host is resolved and checked by `guard` (no loopback, private,
    link-local or metadata address, unless its allowlist says so) when it is sent, and the
    connection goes to the address checked, so a name cannot resolve elsewhere in between;
    FetchRefused (an httpx.TransportError) when it may not go anywhere."""

    def __init__(self, guard: WebhookGuard, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.guard = guard
        self._inner = inner if inner is not None else httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            destination = await self.guard.check(str(request.url))
        except WebhookRefused as exc:
            raise FetchRefused(exc.reason, request=request) from None
        request.url = destination.request_url()  # the Host header keeps the name
        if destination.url.scheme == "https":
            # The certificate is checked against the name; no connection kept for another.
            request.extensions = {**request.extensions, "sni_hostname": destination.url.host}
            request.headers["Connection"] = "close"
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
