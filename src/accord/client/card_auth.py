"""CardAuth: an httpx auth flow presenting the credentials an agent's card asks for."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
from pathlib import Path

import httpx

from accord.client.credentials import Chosen, Credentials, Outgoing
from accord.types import AgentCard


class CardAuth(httpx.Auth):
    """Adds to every request the credentials chosen for the agent's card (`use`); before a
    card is known (fetching the public card), nothing. A 401 answer after a cached OAuth
    token was sent fetches a new token and tries once more."""

    requires_request_body = True

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials
        self.chosen: Chosen = []

    def use(self, card: AgentCard) -> None:
        """Choose the credentials `card` asks for (A2AClientError when none meet it)."""
        self.chosen = self.credentials.choose(card)

    async def outgoing(self) -> Outgoing:
        """What the chosen credentials add to a request."""
        out = Outgoing({}, {}, {})
        for scheme, scopes, credential in self.chosen:
            await credential.apply(scheme, scopes, out)
        return out

    async def metadata(self) -> tuple[tuple[str, str], ...]:
        """The chosen credentials as gRPC metadata (a key meant for a query parameter or a
        cookie goes as the metadata entry of its name)."""
        out = await self.outgoing()
        merged = {**out.cookies, **out.params, **out.headers}
        return tuple((name.lower(), value) for name, value in merged.items())

    def grpc_tls(self) -> tuple[bytes | None, bytes | None, bytes | None]:
        """The CA bundle, client key and certificate chain for a gRPC channel (PEM bytes)."""
        certificate = self.credentials.certificate
        ca = self.credentials.ca
        if certificate is None:
            return (_read(ca), None, None)
        key = certificate.keyfile or certificate.certfile
        return _read(ca), _read(key), _read(certificate.certfile)

    def renew(self) -> bool:
        """Forget the cached tokens the chosen credentials hold; True if any was dropped."""
        return any([credential.renew() for _, _, credential in self.chosen])

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        _add(request, await self.outgoing())
        response = yield request
        if response.status_code == 401 and self.renew():
            _add(request, await self.outgoing())
            yield request

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        raise RuntimeError("CardAuth serves the async client only")


def _add(request: httpx.Request, out: Outgoing) -> None:
    request.headers.update(out.headers)
    if out.params:
        request.url = request.url.copy_merge_params(out.params)
    if out.cookies:
        given = request.headers.get("Cookie")
        pairs = "; ".join(f"{name}={value}" for name, value in out.cookies.items())
        request.headers["Cookie"] = f"{given}; {pairs}" if given else pairs


def _read(path: str | None) -> bytes | None:
    return Path(path).read_bytes() if path is not None else None
