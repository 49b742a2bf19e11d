"""DirectClient: the Client's httpx client, sending plain-HTTP requests straight over keep-alive."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import cast

import httpx

from accord.client.card_auth import CardAuth
from accord.client.credentials import Outgoing
from accord.client.keepalive import (
    Answer,
    KeepAliveTransport,
    answer_of,
    request_data,
    takes,
)

HTTPX_LOG = logging.getLogger("httpx")
"""Where httpx's client logs each request (at INFO), as the direct path does too."""
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
"""Methods httpx sends `Content-Length: 0` with when they carry no body."""
MAX_URLS = 256
"""URLs whose `Host` field a DirectClient keeps (all of them forgotten past that)."""


class DirectClient(httpx.AsyncClient):
    """An httpx client over a KeepAliveTransport, whose requests made with `fetch` or
    `streamed` go straight to that transport instead of through `send` (its Request and
    Headers, auth and redirect flows, cookie jar read on every answer).

    Straight or not, a request goes out alike: the client's default headers, `Host` and
    `Content-Length` as httpx sets them, the CardAuth credentials (sent again once after a
    401 when a cached token was dropped), the client's timeouts, redirects not followed, the
    answer's cookies kept in the jar, httpx's log line. Requests go through `send` when the
    jar holds cookies (httpx chooses which to send), to https or a URL another transport is
    mounted for, with user info in the URL, or with credentials that go in the query or a
    cookie."""

    def __init__(
        self,
        *,
        timeout: float | httpx.Timeout | None,
        auth: CardAuth | None,
        transport: KeepAliveTransport,
    ) -> None:
        super().__init__(timeout=timeout, auth=auth, transport=transport)
        self._keep_alive = transport
        self._card_auth = auth
        defaults = [(name.decode(), value.decode()) for name, value in self.headers.raw]
        self._defaults = {name.lower(): (name, value) for name, value in defaults}
        self._hosts: dict[int, tuple[httpx.URL, str | None]] = {}
        self._timeouts = (self.timeout, self.timeout.as_dict())

    async def direct(
        self,
        method: str,
        url: httpx.URL,
        content: bytes | None,
        headers: Mapping[str, str],
    ) -> httpx.Response | None:
        """The response to a request sent straight to the keep-alive transport, its body
        streamed, or None when the request must go through `send`."""
        straight, out = await self._straight(method, url)
        if not straight:
            return None
        response = await self._sent(method, url, content, headers, out)
        if response.status_code == 401 and self._renewed():
            await response.aread()
            response = await self._sent(method, url, content, headers, await self._outgoing())
        return response

    async def fetched(
        self, method: str, url: httpx.URL, content: bytes | None, headers: Mapping[str, str]
    ) -> Answer | None:
        """`direct`'s response read whole, without an httpx.Response: status, headers and
        body; None when the request must go through `send`."""
        straight, out = await self._straight(method, url)
        if not straight:
            return None
        answer = await self._fetched(method, url, content, headers, out)
        if answer.status_code == 401 and self._renewed():
            answer = await self._fetched(method, url, content, headers, await self._outgoing())
        return answer

    async def _straight(self, method: str, url: httpx.URL) -> tuple[bool, Outgoing | None]:
        """Whether a request goes straight, and the credentials it then carries."""
        if not self._goes_direct(method, url):
            return False, None
        out = await self._outgoing()
        return out is None or not (out.params or out.cookies), out

    async def _outgoing(self) -> Outgoing | None:
        auth = self._card_auth
        return await auth.outgoing() if auth is not None else None

    def _renewed(self) -> bool:
        """Whether a 401 is worth sending the request again for: a cached token was dropped."""
        return self._card_auth is not None and self._card_auth.renew()

    def _goes_direct(self, method: str, url: httpx.URL) -> bool:
        return (
            method != "HEAD"  # what `takes` says of the method; `_host` checks the scheme
            and self._host(url) is not None
            and not self.is_closed
            and not self.cookies
        )

    def _host(self, url: httpx.URL) -> str | None:
        """The `Host` field of a request to `url` sent straight, None if it cannot go so (not
        plain http, user info, another transport mounted); kept per URL object, as the
        transports parse each agent URL once."""
        known = self._hosts.get(id(url))
        if known is not None and known[0] is url:  # the entry keeps `url`, so its id is its own
            return known[1]
        direct = (
            takes("POST", url)
            and not url.userinfo
            and self._transport_for_url(url) is self._keep_alive
        )
        host = url.netloc.decode("ascii") if direct else None
        if len(self._hosts) >= MAX_URLS:
            self._hosts.clear()
        self._hosts[id(url)] = (url, host)
        return host

    def _timeout_dict(self) -> dict[str, float | None]:
        """httpx's timeouts as the transport takes them, worked out again only when set anew."""
        if self._timeouts[0] is not self.timeout:
            self._timeouts = (self.timeout, self.timeout.as_dict())
        return self._timeouts[1]

    async def _sent(
        self,
        method: str,
        url: httpx.URL,
        content: bytes | None,
        headers: Mapping[str, str],
        out: Outgoing | None,
    ) -> httpx.Response:
        fields = self._fields(method, url, content, headers, out)
        data = request_data(method, url.raw_path, fields, content or b"")
        response = await self._keep_alive.exchange(method, url, data, self._timeout_dict())
        self._answered(method, url, fields, response.status_code, response.headers)
        return response

    async def _fetched(
        self,
        method: str,
        url: httpx.URL,
        content: bytes | None,
        headers: Mapping[str, str],
        out: Outgoing | None,
    ) -> Answer:
        fields = self._fields(method, url, content, headers, out)
        data = request_data(method, url.raw_path, fields, content or b"")
        answer = await self._keep_alive.fetch(method, url, data, self._timeout_dict())
        self._answered(method, url, fields, answer.status_code, answer.headers, answer.raw_headers)
        return answer

    def _answered(
        self,
        method: str,
        url: httpx.URL,
        sent: list[tuple[str, str]],
        status: int,
        received: Mapping[str, str],
        raw: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        """httpx's log line for a response, and its cookies kept in the jar (`received`, or
        their `raw` fields when given, as httpx reads them)."""
        if HTTPX_LOG.isEnabledFor(logging.INFO):
            reason = httpx.codes.get_reason_phrase(status)
            HTTPX_LOG.info('HTTP Request: %s %s "HTTP/1.1 %d %s"', method, url, status, reason)
        if "set-cookie" in received:  # rare
            request = httpx.Request(method, url, headers=sent)
            answer = httpx.Response(
                status, headers=received if raw is None else raw, request=request
            )
            self.cookies.extract_cookies(answer)

    def _fields(
        self,
        method: str,
        url: httpx.URL,
        content: bytes | None,
        headers: Mapping[str, str],
        out: Outgoing | None,
    ) -> list[tuple[str, str]]:
        """The request's headers in httpx's order: Host, the client's defaults, the request's,
        Content-Length, the credentials' (a header replacing one of its name)."""
        fields = {"host": ("Host", cast(str, self._host(url)))}
        if not content and method in BODY_METHODS:
            fields["content-length"] = ("Content-Length", "0")
        fields |= self._defaults
        _merge(fields, headers)
        if content:
            fields.setdefault("content-length", ("Content-Length", str(len(content))))
        if out is not None:
            _merge(fields, out.headers)
        return list(fields.values())


def _merge(fields: dict[str, tuple[str, str]], headers: Mapping[str, str]) -> None:
    """`headers` after `fields`, each replacing the field of its name (httpx's Headers.update)."""
    for name, value in headers.items():
        key = name.lower()
        fields.pop(key, None)
        fields[key] = (name, value)


async def fetch(
    http: httpx.AsyncClient,
    method: str,
    url: httpx.URL,
    *,
    content: bytes | None,
    headers: Mapping[str, str],
) -> Answer:
    """The response to a request made with `http`, read whole, as an Answer: straight over
    its keep-alive transport, without building an httpx.Response (its Headers, stream and
    close), when it is a DirectClient that can send it so, else through `http.send`."""
    if isinstance(http, DirectClient):
        answer = await http.fetched(method, url, content, headers)
        if answer is not None:
            return answer
    return answer_of(await _through_httpx(http, method, url, content, headers))


async def _through_httpx(
    http: httpx.AsyncClient,
    method: str,
    url: httpx.URL,
    content: bytes | None,
    headers: Mapping[str, str],
    *,
    stream: bool = False,
) -> httpx.Response:
    request = http.build_request(method, url, content=content, headers=headers)
    return await http.send(request, stream=stream)


@asynccontextmanager
async def streamed(
    http: httpx.AsyncClient,
    method: str,
    url: httpx.URL,
    *,
    content: bytes | None,
    headers: Mapping[str, str],
) -> AsyncIterator[httpx.Response]:
    """The response to a request made with `http`, its body streamed: straight over its
    keep-alive transport when it is a DirectClient that can send it so, else through
    `http.send`; the response is closed on leaving."""
    response = None
    if isinstance(http, DirectClient):
        response = await http.direct(method, url, content, headers)
    if response is None:
        response = await _through_httpx(http, method, url, content, headers, stream=True)
    try:
        yield response
    finally:
        await response.aclose()
