"""A uvicorn HTTP protocol that hands the app each request's client certificate (ASGI `tls`)."""

from __future__ import annotations

import ssl
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.auto import AutoHTTPProtocol


class ClientCertificateProtocol(AutoHTTPProtocol):  # type: ignore[misc,valid-type]
    """uvicorn's HTTP protocol, adding to each request's scope the ASGI `tls` extension with
    the certificate the client presented on this connection (verified by the handshake);
    uvicorn itself does not expose it. Use as `uvicorn.run(app, http=...)`."""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        if der:
            pem = ssl.DER_cert_to_PEM_cert(der)
            self.app = _WithTls(self.app, pem)  # type: ignore[has-type]


class _WithTls:
    """The app as one TLS connection sees it: its scopes carry the `tls` extension."""

    def __init__(self, app: ASGIApp, client_pem: str) -> None:
        self.app = app
        self.tls = {"client_cert_chain": [client_pem], "client_cert_error": None}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["extensions"] = {**(scope.get("extensions") or {}), "tls": self.tls}
        await self.app(scope, receive, send)
