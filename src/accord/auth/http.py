"""HTTP authentication schemes: Basic (a verifier callback) and Bearer (opaque or JWT tokens)."""

from __future__ import annotations

import base64
import binascii

from accord.auth.scheme import InvalidCredential, Scheme, Verifier, call_verifier, quoted
from accord.auth.tokens import JwtCheck
from accord.core import Inbound, Principal
from accord.types import HTTPAuthSecurityScheme, SecurityScheme

REALM = "a2a"


def authorization(inbound: Inbound, scheme: str) -> str | None:
    """The credentials of the request's `Authorization` header when it names `scheme`
    (case-insensitive), else None."""
    header = inbound.headers.get("authorization")
    if not header:
        return None
    given, _, credentials = header.strip().partition(" ")
    if given.lower() != scheme.lower():
        return None
    credentials = credentials.strip()
    if not credentials:
        raise InvalidCredential(f"the Authorization header names {scheme} but carries nothing")
    return credentials


class Basic(Scheme):
    """HTTP Basic: `verify(user, password)` answers the caller (a Principal or its id) or None."""

    def __init__(
        self, verify: Verifier, *, name: str = "basic", description: str | None = None
    ) -> None:
        self.name = name
        self.description = description
        self._verify = verify

    def card_entry(self) -> SecurityScheme:
        return HTTPAuthSecurityScheme(scheme="Basic", description=self.description)

    def challenge(self, error: str | None = None) -> str:
        return f'Basic realm="{REALM}", charset="UTF-8"'

    async def authenticate(self, inbound: Inbound) -> Principal | None:
        credentials = authorization(inbound, "Basic")
        if credentials is None:
            return None
        try:
            decoded = base64.b64decode(credentials, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise InvalidCredential(
                "the Basic credentials are not base64 of user:password"
            ) from None
        user, found, password = decoded.partition(":")
        if not found:
            raise InvalidCredential("the Basic credentials are not user:password")
        return self.principal(await call_verifier(self._verify, user, password))


class Bearer(Scheme):
    """HTTP Bearer tokens: opaque ones checked by `verify(token)` (answering the caller or
    None), or JWTs checked by `jwt` (see `JwtCheck`: key set, issuer, audience, expiry)."""

    def __init__(
        self,
        verify: Verifier | None = None,
        *,
        jwt: JwtCheck | None = None,
        name: str = "bearer",
        description: str | None = None,
    ) -> None:
        if (verify is None) == (jwt is None):
            raise ValueError("give Bearer either a verify callback or a JwtCheck")
        self.name = name
        self.description = description
        self._verify = verify
        self.jwt = jwt

    def card_entry(self) -> SecurityScheme:
        bearer_format = "JWT" if self.jwt is not None else None
        return HTTPAuthSecurityScheme(
            scheme="Bearer", bearer_format=bearer_format, description=self.description
        )

    def challenge(self, error: str | None = None) -> str:
        return bearer_challenge(error)

    async def authenticate(self, inbound: Inbound) -> Principal | None:
        token = authorization(inbound, "Bearer")
        if token is None:
            return None
        if self.jwt is not None:
            return await self.jwt.principal(token, self.name)
        assert self._verify is not None
        return self.principal(await call_verifier(self._verify, token))


def bearer_challenge(error: str | None, scopes: str | None = None) -> str:
    """A Bearer challenge (RFC 6750, section 3): the realm, and why a token was refused."""
    challenge = f'Bearer realm="{REALM}"'
    if scopes:
        challenge += f", scope={quoted(scopes)}"
    if error is not None:
        challenge += f', error="invalid_token", error_description={quoted(error)}'
    return challenge
