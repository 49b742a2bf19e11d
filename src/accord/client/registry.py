"""A registry's HTTP API from the client's side: discovering agents (their cards, verified with
trusted keys), and a curator's adding, removing and re-checking them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from accord.client.card_resolver import card_from_document, check_signature
from accord.client.failures import http_errors
from accord.errors import A2AClientError
from accord.types import AgentCard

if TYPE_CHECKING:
    from accord.keys.cards import TrustedKeys

Json = dict[str, Any]
FilterValue = str | Iterable[str]
API = "/registry"
TIMEOUT = httpx.Timeout(30.0, connect=10.0)


class RegistryClient:
    """Talks to the accord registry at `url` (its base URL) over its HTTP API; `headers` (a
    curator's credentials, say) go with every request. Use as `async with RegistryClient(url)`.
    Every failure is an A2AClientError saying what the registry answered."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self._headers = dict(headers or {})
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=TIMEOUT)

    async def search(
        self,
        query: str = "",
        filters: Mapping[str, FilterValue] | None = None,
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> Json:
        """A page of the agents `query` finds (`filters`: skill, tag, input_mode, output_mode,
        version, binding, provider, scheme, status; a list for several values): `agents`,
        `total` and `nextOffset`."""
        params: list[tuple[str, str | int]] = [("q", query)] if query else []
        for name, value in (filters or {}).items():
            values = [value] if isinstance(value, str) else list(value)
            params += [(name, item) for item in values]
        if limit is not None:
            params.append(("limit", limit))
        if offset:
            params.append(("offset", offset))
        return await self._call("GET", "/agents", params=params)

    async def show(self, url: str) -> Json:
        """The agent kept under `url` and its history: `{"agent": ..., "history": [...]}`."""
        return await self._call("GET", "/agent", params=[("url", url)])

    async def add(self, url: str) -> Json:
        """Add the agent whose card is at `url` (a curator's call)."""
        return await self._call("POST", "/agents", json={"url": url})

    async def remove(self, url: str) -> Json:
        """Remove the agent kept under `url` (a curator's call)."""
        return await self._call("DELETE", "/agents", params=[("url", url)])

    async def refresh(self, url: str | None = None) -> dict[str, str]:
        """Check the card of the agent under `url` again, or every agent's (a curator's
        call): what each check found."""
        checked: dict[str, str] = (
            await self._call("POST", "/refresh", json={"url": url} if url else {})
        )["checked"]
        return checked

    async def _call(self, method: str, path: str, **request: Any) -> Json:
        target = f"{self.url}{API}{path}"
        with http_errors(method, target):
            response = await self._http.request(method, target, headers=self._headers, **request)
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.is_success and isinstance(body, dict):
            return body
        error = body.get("error") if isinstance(body, dict) else None
        reasons = body.get("reasons") if isinstance(body, dict) else None
        said = error or f"HTTP {response.status_code} with no JSON error"
        if reasons:
            said += "".join(f"\n  - {reason}" for reason in reasons)
        raise A2AClientError(
            f"{method} {target}: the registry answered {said}", status_code=response.status_code
        )

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> RegistryClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def discover(
    registry_url: str,
    query: str = "",
    filters: Mapping[str, FilterValue] | None = None,
    *,
    trusted_keys: TrustedKeys | None = None,
    limit: int | None = None,
    http_client: httpx.AsyncClient | None = None,
) -> list[AgentCard]:
    """The cards of the agents the registry at `registry_url` finds for `query` and `filters`
    (those of `RegistryClient.search`), best first; with `trusted_keys`, only cards signed by
    one of them (the others are left out)."""
    async with RegistryClient(registry_url, http_client=http_client) as registry:
        page = await registry.search(query, filters, limit=limit)
    cards = []
    for entry in page.get("agents", []):
        document, source = entry.get("card"), str(entry.get("url"))
        if trusted_keys is not None:
            try:
                await check_signature(document, source, trusted_keys)
            except A2AClientError:
                continue
        cards.append(card_from_document(document, source))
    return cards
