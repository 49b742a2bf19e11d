"""MutualTls: the client certificate TLS verified, mapped to a principal."""

from __future__ import annotations

from collections.abc import Callable

from cryptography import x509
from cryptography.x509.oid import NameOID

from accord.auth.scheme import InvalidCredential, Scheme, Verified
from accord.core import ClientCertificate, Inbound, Principal
from accord.types import MutualTLSSecurityScheme, SecurityScheme

CertificateMapper = Callable[[ClientCertificate], Verified]


class MutualTls(Scheme):
    """A client certificate, verified by the TLS layer against the server's client CA
    (`accord serve --tls-client-ca`). The caller is `principal_of(certificate)` (a Principal,
    its id, or None to refuse); by default the certificate's common name, else its subject.
    """

    def __init__(
        self,
        principal_of: CertificateMapper | None = None,
        *,
        name: str = "mtls",
        description: str | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self._principal_of = principal_of or default_principal

    def card_entry(self) -> SecurityScheme:
        return MutualTLSSecurityScheme(description=self.description)

    def challenge(self, error: str | None = None) -> str:
        return "MutualTLS"  # no HTTP scheme exists: names what the agent wants, for people

    async def authenticate(self, inbound: Inbound) -> Principal | None:
        if inbound.certificate is None:
            return None
        return self.principal(self._principal_of(inbound.certificate))


def default_principal(certificate: ClientCertificate) -> Principal:
    """The certificate's common name (else its whole subject), with the subject as a claim."""
    try:
        parsed = x509.load_der_x509_certificate(certificate.der)
    except ValueError:
        raise InvalidCredential("the client certificate cannot be read") from None
    names = parsed.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    common_name = str(names[0].value) if names else None
    caller = common_name or certificate.subject
    if not caller:  # a certificate may name its holder in subjectAltName only
        raise InvalidCredential("the client certificate has no subject to name the caller by")
    return Principal(
        caller,
        claims={"subject": certificate.subject, "serial_number": parsed.serial_number},
    )
