"""TLS settings of a server and the client certificate of a mutual-TLS request."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from starlette.types import Scope

from accord.core import ClientCertificate


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """The server's certificate chain and key (PEM files) and, for mutual TLS, the CA bundle
    client certificates are verified against."""

    certfile: str
    keyfile: str
    client_ca: str | None = None

    def uvicorn_options(self) -> dict[str, Any]:
        """uvicorn's settings serving HTTPS with these files. With `client_ca`, clients are
        asked for a certificate, verified against it when given: optional at the handshake
        (the public card needs none), the security requirements decide where one is needed;
        the protocol hands the certificate to the app (ASGI `tls` extension)."""
        from accord.server.uvicorn_tls import ClientCertificateProtocol

        options: dict[str, Any] = {"ssl_certfile": self.certfile, "ssl_keyfile": self.keyfile}
        if self.client_ca is not None:
            options |= {
                "ssl_ca_certs": self.client_ca,
                "ssl_cert_reqs": ssl.CERT_OPTIONAL,
                "http": ClientCertificateProtocol,
            }
        return options

    def pem(self) -> tuple[bytes, bytes, bytes | None]:
        """The certificate chain, key and client CA bundle as bytes (for grpcio)."""
        ca = Path(self.client_ca).read_bytes() if self.client_ca is not None else None
        return Path(self.certfile).read_bytes(), Path(self.keyfile).read_bytes(), ca


def client_certificate(scope: Scope) -> ClientCertificate | None:
    """The verified client certificate of the request's connection, from the ASGI `tls`
    extension (`accord.server.uvicorn_tls` adds it under uvicorn), if any."""
    tls = (scope.get("extensions") or {}).get("tls")
    if not tls or tls.get("client_cert_error") or not tls.get("client_cert_chain"):
        return None
    return parsed_certificate(tls["client_cert_chain"][0])


@lru_cache(maxsize=1024)
def parsed_certificate(pem: str | bytes) -> ClientCertificate:
    """A PEM certificate as a ClientCertificate (parsed once per distinct certificate)."""
    certificate = x509.load_pem_x509_certificate(pem.encode() if isinstance(pem, str) else pem)
    der = certificate.public_bytes(Encoding.DER)
    return ClientCertificate(der, certificate.subject.rfc4514_string())
