"""Discovery: an issuer's metadata document (OpenID Connect or OAuth 2.0), its issuer and keys."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx
from jwt import PyJWK

from accord.auth.scheme import not_empty
from accord.keys import JwksClient, KeySetUnavailable


class Discovery:
    """The metadata published at `url` (`.well-known/openid-configuration`, RFC 8414's
    `.well-known/oauth-authorization-server`): fetched on first use, kept `max_age` seconds.

    Its `jwks_uri` becomes a `JwksClient` (refetched when a token names a key it lacks), its
    `issuer` the issuer tokens must name. A key source and issuer source for `JwtCheck`.
    An unknown key id refetches the key set at most once per `key_refresh_interval` seconds.
    """

    def __init__(
        self,
        url: str,
        *,
        max_age: float = 3600.0,
        key_refresh_interval: float = 30.0,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = not_empty(url, "the discovery document's URL")
        self._max_age = max_age
        self._key_refresh_interval = key_refresh_interval
        self._timeout = timeout
        self._clock = clock
        self._document: dict[str, Any] | None = None
        self._fetched_at = 0.0
        self._jwks: JwksClient | None = None
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> PyJWK:
        await self._refresh()
        assert self._jwks is not None
        return await self._jwks.key(kid)

    async def issuer(self) -> str:
        document = await self._refresh()
        return str(document["issuer"])

    async def _refresh(self) -> dict[str, Any]:
        async with self._lock:
            if self._document is None or self._clock() - self._fetched_at >= self._max_age:
                document = await self._fetch()
                jwks_uri = document["jwks_uri"]
                if self._jwks is None or self._jwks.url != jwks_uri:
                    self._jwks = JwksClient(
                        jwks_uri,
                        timeout=self._timeout,
                        min_refresh_interval=self._key_refresh_interval,
                    )
                self._document, self._fetched_at = document, self._clock()
            return self._document

    async def _fetch(self) -> dict[str, Any]:
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as http:
                response = await http.get(self.url)
            response.raise_for_status()
            document = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise KeySetUnavailable(
                f"cannot fetch the discovery document at {self.url}: {exc}"
            ) from exc
        if not isinstance(document, dict) or not all(
            isinstance(document.get(member), str) for member in ("issuer", "jwks_uri")
        ):
            raise KeySetUnavailable(
                f"the discovery document at {self.url} names no issuer and jwks_uri"
            )
        return document
