"""Credentials a client holds, and which of them an agent's card asks for (its security
requirements: an OR of ANDs of schemes)."""

from __future__ import annotations

import base64
import ssl
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from accord.client.oauth_token import TokenSource
from accord.errors import A2AClientError
from accord.types import (
    AgentCard,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityScheme,
)


class CredentialsRequired(A2AClientError):
    """The agent's card asks for credentials the client was not given."""


@dataclass(slots=True)
class Outgoing:
    """What credentials add to one request: headers, query parameters, cookies."""

    headers: dict[str, str]
    params: dict[str, str]
    cookies: dict[str, str]


class Credential(ABC):
    """One credential; `scheme` (a card's scheme name) pins it to that scheme, else it serves
    any scheme of its kind."""

    scheme: str | None = None

    def serves(self, name: str, scheme: SecurityScheme) -> bool:
        """Whether this credential can answer the card's scheme `name`."""
        return (self.scheme is None or self.scheme == name) and self.fits(scheme)

    @abstractmethod
    def fits(self, scheme: SecurityScheme) -> bool: ...

    async def apply(self, scheme: SecurityScheme, scopes: Sequence[str], out: Outgoing) -> None:
        """Add this credential to a request going to an agent declaring `scheme`."""

    def renew(self) -> bool:
        """Forget a cached token the agent refused; True if a retry may fare better."""
        return False


@dataclass
class ApiKey(Credential):
    """An API key, sent where the card's apiKey scheme says (header, query or cookie)."""

    key: str
    scheme: str | None = None

    def fits(self, scheme: SecurityScheme) -> bool:
        return isinstance(scheme, APIKeySecurityScheme)

    async def apply(self, scheme: SecurityScheme, scopes: Sequence[str], out: Outgoing) -> None:
        assert isinstance(scheme, APIKeySecurityScheme)
        where = {"header": out.headers, "query": out.params, "cookie": out.cookies}[scheme.in_]
        where[scheme.name] = self.key


@dataclass
class BearerToken(Credential):
    """A bearer token you already have (opaque or a JWT): for http bearer, oauth2 and
    openIdConnect schemes."""

    token: str
    scheme: str | None = None

    def fits(self, scheme: SecurityScheme) -> bool:
        return _takes_bearer(scheme)

    async def apply(self, scheme: SecurityScheme, scopes: Sequence[str], out: Outgoing) -> None:
        out.headers["Authorization"] = f"Bearer {self.token}"


@dataclass
class BasicAuth(Credential):
    """A user name and password for an http basic scheme."""

    user: str
    password: str
    scheme: str | None = None

    def fits(self, scheme: SecurityScheme) -> bool:
        return isinstance(scheme, HTTPAuthSecurityScheme) and scheme.scheme.lower() == "basic"

    async def apply(self, scheme: SecurityScheme, scopes: Sequence[str], out: Outgoing) -> None:
        pair = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        out.headers["Authorization"] = f"Basic {pair}"


class ClientCredentials(Credential):
    """OAuth 2.0 client credentials: a token is fetched from the token endpoint (the card's
    client-credentials flow, the OpenID provider's, or `token_url`), cached and fetched again
    `refresh_margin` seconds before it expires. `scopes` are asked for (default: those the
    card's requirement names)."""

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        token_url: str | None = None,
        scopes: Sequence[str] | None = None,
        refresh_margin: float = 30.0,
        scheme: str | None = None,
    ) -> None:
        self.scheme = scheme
        self.tokens = TokenSource(
            client_id, client_secret, token_url=token_url, scopes=scopes, margin=refresh_margin
        )

    def fits(self, scheme: SecurityScheme) -> bool:
        return isinstance(scheme, OAuth2SecurityScheme | OpenIdConnectSecurityScheme)

    async def apply(self, scheme: SecurityScheme, scopes: Sequence[str], out: Outgoing) -> None:
        assert isinstance(scheme, OAuth2SecurityScheme | OpenIdConnectSecurityScheme)
        out.headers["Authorization"] = f"Bearer {await self.tokens.token(scheme, scopes)}"

    def renew(self) -> bool:
        return self.tokens.forget()


@dataclass
class ClientCertificate(Credential):
    """A client certificate and its key (PEM files) for mutual TLS; `ca` is the bundle the
    agent's certificate is verified against (default: the system's)."""

    certfile: str
    keyfile: str | None = None
    ca: str | None = None
    scheme: str | None = None

    def fits(self, scheme: SecurityScheme) -> bool:
        return isinstance(scheme, MutualTLSSecurityScheme)


def _takes_bearer(scheme: SecurityScheme) -> bool:
    if isinstance(scheme, HTTPAuthSecurityScheme):
        return scheme.scheme.lower() == "bearer"
    return isinstance(scheme, OAuth2SecurityScheme | OpenIdConnectSecurityScheme)


Chosen = list[tuple[SecurityScheme, Sequence[str], Credential]]


UNDECLARED_SCHEMES: tuple[SecurityScheme, ...] = (
    APIKeySecurityScheme(name="X-API-Key", in_="header"),
    HTTPAuthSecurityScheme(scheme="bearer"),
    HTTPAuthSecurityScheme(scheme="basic"),
)
"""Where credentials go to an agent whose card declares no scheme (`Credentials(undeclared=
True)`): an API key in `X-API-Key`, a token or a user and password in `Authorization`."""


class Credentials:
    """The credentials a `Client` may present; for each agent it presents those that meet
    one of the card's security requirements (the first that can be met), and nothing to an
    agent that asks for none, unless `undeclared`: then such an agent gets the API keys,
    bearer tokens and basic credentials as `UNDECLARED_SCHEMES` places them (an agent that
    checks them with an authenticator of its own, its card saying nothing). `ca` is a CA
    bundle to verify the agent's TLS certificate."""

    def __init__(
        self, *credentials: Credential, ca: str | None = None, undeclared: bool = False
    ) -> None:
        self.credentials = list(credentials)
        self.undeclared = undeclared
        certificates = [c for c in credentials if isinstance(c, ClientCertificate)]
        self.certificate = certificates[0] if certificates else None
        self.ca = ca or (self.certificate.ca if self.certificate else None)

    def choose(self, card: AgentCard) -> Chosen:
        """The credentials to send to the agent of `card`; A2AClientError naming what the
        card asks for when none of its requirements can be met."""
        schemes = card.security_schemes or {}
        requirements = card.security or []
        if not requirements:
            return self._undeclared() if self.undeclared else []
        for requirement in requirements:
            chosen: Chosen = []
            for name, scopes in requirement.items():
                scheme = schemes.get(name)
                found = next(
                    (c for c in self.credentials if scheme and c.serves(name, scheme)), None
                )
                if scheme is None or found is None:
                    break
                chosen.append((scheme, scopes, found))
            else:
                return chosen
        raise CredentialsRequired(
            f"{card.name} asks for {describe_requirements(card)}; no credentials given meet that"
        )

    def _undeclared(self) -> Chosen:
        chosen: Chosen = []
        for credential in self.credentials:
            scheme = next((s for s in UNDECLARED_SCHEMES if credential.fits(s)), None)
            if scheme is not None:
                chosen.append((scheme, [], credential))
        return chosen

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context with the client certificate and CA bundle, when either is given."""
        if self.certificate is None and self.ca is None:
            return None
        try:
            context = ssl.create_default_context(cafile=self.ca)
        except OSError as exc:  # ssl.SSLError too
            raise A2AClientError(f"cannot use the CA bundle {self.ca}: {_reason(exc)}") from None
        if self.certificate is not None:
            certificate = self.certificate
            try:
                context.load_cert_chain(certificate.certfile, certificate.keyfile)
            except OSError as exc:  # ssl.SSLError too
                raise A2AClientError(
                    f"cannot use the client certificate {certificate.certfile}: {_reason(exc)}"
                ) from None
        return context


def describe_requirements(card: AgentCard) -> str:
    """What the card's security requirements ask for, in words a person can act on."""
    schemes = card.security_schemes or {}
    ways = []
    for requirement in card.security or []:
        parts = []
        for name, scopes in requirement.items():
            scheme = schemes.get(name)
            text = f"{name} ({describe_scheme(scheme)})" if scheme is not None else name
            parts.append(text + (f" with scopes {' '.join(scopes)}" if scopes else ""))
        ways.append(" and ".join(parts))
    return " or ".join(ways) or "no credentials"


def describe_scheme(scheme: SecurityScheme) -> str:
    if isinstance(scheme, APIKeySecurityScheme):
        return f"an API key in the {scheme.in_} {scheme.name!r}"
    if isinstance(scheme, HTTPAuthSecurityScheme):
        return (
            "a user and password (HTTP Basic)"
            if scheme.scheme.lower() == "basic"
            else (f"a {scheme.scheme} token")
        )
    if isinstance(scheme, OAuth2SecurityScheme):
        flow = scheme.flows.client_credentials
        return "an OAuth 2.0 token" + (f" from {flow.token_url}" if flow else "")
    if isinstance(scheme, OpenIdConnectSecurityScheme):
        return f"an OpenID Connect token ({scheme.open_id_connect_url})"
    return "a client certificate (mutual TLS)"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)
