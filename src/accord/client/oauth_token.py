"""TokenSource: OAuth 2.0 client-credentials access tokens, fetched, cached and renewed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

import httpx

from accord.errors import A2AClientError
from accord.types import OAuth2SecurityScheme, OpenIdConnectSecurityScheme


class TokenSource:
    """Tokens from the client-credentials grant (RFC 6749, 4.4), the client authenticated
    with HTTP Basic; one is reused until `margin` seconds before it expires."""

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        token_url: str | None = None,
        scopes: Sequence[str] | None = None,
        margin: float = 30.0,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client_id = client_id
        self._secret = client_secret
        self.token_url = token_url
        self.scopes = scopes
        self._margin = margin
        self._timeout = timeout
        self._clock = clock
        self._token: str | None = None
        self._expires_at = 0.0
        self._lock = asyncio.Lock()
        self.fetched = 0

    async def token(
        self, scheme: OAuth2SecurityScheme | OpenIdConnectSecurityScheme, scopes: Sequence[str]
    ) -> str:
        """A valid access token for `scheme`, fetched when there is none or it is about to
        expire."""
        async with self._lock:
            if self._token is None or self._clock() >= self._expires_at - self._margin:
                url = self.token_url or await self._endpoint(scheme)
                wanted = self.scopes if self.scopes is not None else scopes
                self._token, lifetime = await self._fetch(url, wanted)
                self._expires_at = self._clock() + lifetime
            return self._token

    def forget(self) -> bool:
        had = self._token is not None
        self._token = None
        return had

    async def _endpoint(self, scheme: OAuth2SecurityScheme | OpenIdConnectSecurityScheme) -> str:
        if isinstance(scheme, OAuth2SecurityScheme):
            flow = scheme.flows.client_credentials
            if flow is None:
                raise A2AClientError("the agent's OAuth 2.0 scheme has no client-credentials flow")
            return flow.token_url
        document = await self._get_json(scheme.open_id_connect_url)
        endpoint = document.get("token_endpoint")
        if not isinstance(endpoint, str):
            raise A2AClientError(f"{scheme.open_id_connect_url} names no token_endpoint")
        return endpoint

    async def _fetch(self, url: str, scopes: Sequence[str]) -> tuple[str, float]:
        form = {"grant_type": "client_credentials"}
        if scopes:
            form["scope"] = " ".join(scopes)
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as http:
                response = await http.post(url, data=form, auth=(self.client_id, self._secret))
        except httpx.HTTPError as exc:
            raise A2AClientError(f"cannot get a token from {url}: {exc}") from None
        body = _json(response)
        token = body.get("access_token")
        if response.status_code != 200 or not isinstance(token, str):
            reason = body.get("error_description") or body.get("error") or response.status_code
            raise A2AClientError(f"{url} refused a token to {self.client_id}: {reason}")
        self.fetched += 1
        lifetime = body.get("expires_in")
        return token, float(lifetime) if isinstance(lifetime, int | float) else 3600.0

    async def _get_json(self, url: str) -> dict[str, object]:
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as http:
                response = await http.get(url)
        except httpx.HTTPError as exc:
            raise A2AClientError(f"cannot read {url}: {exc}") from None
        return _json(response)


def _json(response: httpx.Response) -> dict[str, object]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
