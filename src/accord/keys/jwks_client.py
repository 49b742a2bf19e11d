"""JwksClient: a JSON Web Key Set fetched over HTTP, cached, refreshed when a key is unknown."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx
from jwt import PyJWK, PyJWKSet
from jwt.exceptions import PyJWKError, PyJWKSetError


class JwksError(Exception):
    """The key set could not be fetched or read, or holds no key usable for the token."""


class KeySetUnavailable(JwksError):
    """The key set (or the document naming it) could not be fetched or read: the publisher's
    side failed, whatever the token presented."""


class JwksClient:
    """The keys published at `url`, fetched on first use and kept for `max_age` seconds.

    A key id the cached set does not hold triggers one refetch (the issuer may have rotated its
    keys), at most once every `min_refresh_interval` seconds, so tokens naming made-up key ids
    cannot make every request fetch the set again. Concurrent callers share one fetch.
    """

    def __init__(
        self,
        url: str,
        *,
        http: httpx.AsyncClient | None = None,
        max_age: float = 300.0,
        min_refresh_interval: float = 30.0,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self._http = http
        self._max_age = max_age
        self._min_refresh_interval = min_refresh_interval
        self._timeout = timeout
        self._clock = clock
        self._keys: dict[str | None, PyJWK] = {}
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> PyJWK:
        """The signing key named `kid` (None: the set's only key, when it has exactly one)."""
        if self._stale():
            await self._refresh(force=True)
        found = self._find(kid)
        if found is None and await self._refresh(force=False):
            found = self._find(kid)
        if found is None:
            named = f"key id {kid!r}" if kid is not None else "a key id (the set has several)"
            raise JwksError(f"no signing key for {named} at {self.url}")
        return found

    async def keys(self) -> list[PyJWK]:
        """Every signing key of the set, fetched if the cache is stale."""
        if self._stale():
            await self._refresh(force=True)
        return list({id(key): key for key in self._keys.values()}.values())

    def _stale(self) -> bool:
        return self._fetched_at is None or self._clock() - self._fetched_at >= self._max_age

    def _find(self, kid: str | None) -> PyJWK | None:
        if kid is None:
            distinct = {id(key): key for key in self._keys.values()}
            return next(iter(distinct.values())) if len(distinct) == 1 else None
        return self._keys.get(kid)

    async def _refresh(self, *, force: bool) -> bool:
        """Fetch the set again; without `force`, only if the last fetch is old enough."""
        fetched_before = self._fetched_at
        async with self._lock:
            if self._fetched_at != fetched_before:
                return True  # another caller fetched it while this one waited
            recent = (
                self._fetched_at is not None
                and self._clock() - self._fetched_at < self._min_refresh_interval
            )
            if recent and not force:
                return False
            self._keys = _signing_keys(await self._fetch())
            self._fetched_at = self._clock()
            return True

    async def _fetch(self) -> Any:
        try:
            if self._http is not None:
                response = await self._http.get(self.url, timeout=self._timeout)
            else:
                async with httpx.AsyncClient(timeout=self._timeout) as http:
                    response = await http.get(self.url)
            response.raise_for_status()
            return response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise KeySetUnavailable(f"cannot fetch the key set at {self.url}: {exc}") from exc


def _signing_keys(document: Any) -> dict[str | None, PyJWK]:
    """The keys of a JWKS document that may verify signatures, by key id."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise KeySetUnavailable("a key set must be a JSON object with a `keys` array")
    try:
        key_set = PyJWKSet(document["keys"])
    except (PyJWKSetError, PyJWKError) as exc:
        raise KeySetUnavailable(f"the key set holds no usable key: {exc}") from exc
    keys: dict[str | None, PyJWK] = {}
    for key in key_set.keys:
        if key.public_key_use in (None, "sig"):
            keys[key.key_id] = key
    if not keys:
        raise KeySetUnavailable("the key set holds no signing key")
    return keys
