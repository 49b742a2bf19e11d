"""JwtCheck: a JWT verified with PyJWT against published keys, issuer, audience and expiry."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import jwt
from jwt import PyJWK

from accord.auth.scheme import InvalidCredential, not_empty
from accord.core import Principal
from accord.keys import JwksClient, JwksError, KeySetUnavailable

log = logging.getLogger("accord.auth")

ASYMMETRIC_ALGORITHMS = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
)  # fmt: skip
"""The algorithms a token may be signed with by default: public-key ones only, so a key set's
public key can never be used as an HMAC secret."""


class KeySource(Protocol):
    """Where the keys that sign tokens come from (a `JwksClient`, a discovered key set)."""

    async def key(self, kid: str | None) -> PyJWK: ...


class IssuerSource(Protocol):
    """Where the expected issuer comes from when it is not configured (a discovery document)."""

    async def issuer(self) -> str: ...


class JwtCheck:
    """Verifies JWTs: signed by a key of `keys` (a JWKS URL or a KeySource) with one of
    `algorithms`, issued by `issuer`, for `audience` (one of them, when several), not
    expired and not used before its time, allowing `leeway` seconds of clock skew; the
    claims in `required` must be present. `audience` must be given: None (any audience)
    accepts tokens the issuer made for other services too. The caller is the token's `sub` (else its
    `client_id` or `azp`), with the scopes of its `scope` (space-separated) or `scp` claim.
    """

    def __init__(
        self,
        keys: str | KeySource,
        *,
        issuer: str | IssuerSource | None = None,
        audience: str | Sequence[str] | None,
        leeway: float = 30.0,
        algorithms: Sequence[str] = ASYMMETRIC_ALGORITHMS,
        required: Sequence[str] = ("exp",),
    ) -> None:
        self.keys: KeySource = (
            JwksClient(not_empty(keys, "the JWKS URL")) if isinstance(keys, str) else keys
        )
        self.issuer = not_empty(issuer, "the issuer") if isinstance(issuer, str) else issuer
        self.audience = _audience(audience)
        self.leeway = leeway
        self.algorithms = tuple(algorithms)
        self.required = list(required)
        self._logged: str | None = None  # the last reason keys were unavailable, as logged

    async def claims(self, token: str) -> dict[str, Any]:
        """The token's claims once every check passed; InvalidCredential saying which failed.

        Whatever the token holds (any header, any claims) it is InvalidCredential, never
        another error; a key set that cannot be fetched is logged here, once per reason, and
        the caller is told only that the token could not be verified."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError as exc:
            raise InvalidCredential(f"the token is not a JWT: {_shown(str(exc))}") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self.algorithms:
            raise InvalidCredential(
                f"the token is signed with {_shown(repr(algorithm))}, which is not accepted"
            )
        key, issuer = await self._key_and_issuer(header.get("kid"))
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=issuer,
                leeway=self.leeway,
                options={
                    "require": self.required,
                    "verify_aud": self.audience is not None,
                    "verify_iss": issuer is not None,
                },
            )
        except jwt.InvalidTokenError as exc:
            raise InvalidCredential(_reason(exc)) from None
        except (jwt.PyJWTError, ValueError, TypeError):
            # A key of another type than the algorithm the token names (an EC key for RS256).
            raise InvalidCredential("the token's signature does not verify") from None
        return claims

    async def _key_and_issuer(self, kid: str | None) -> tuple[PyJWK, str | None]:
        """The key that signed a token naming `kid` and the issuer it must name;
        InvalidCredential when there is no such key or the keys cannot be had."""
        try:
            key = await self.keys.key(kid)
            issuer = await self._issuer()
        except KeySetUnavailable as exc:
            if str(exc) != self._logged:  # once per reason, not once per request
                self._logged = str(exc)
                log.warning("cannot verify tokens: %s", exc)
            raise InvalidCredential("the token could not be verified") from None
        except JwksError:
            raise InvalidCredential("the token's signing key is unknown") from None
        self._logged = None
        return key, issuer

    async def principal(self, token: str, scheme: str) -> Principal:
        """The caller `token` authenticates under `scheme`."""
        claims = await self.claims(token)
        subject = claims.get("sub") or claims.get("client_id") or claims.get("azp")
        if not isinstance(subject, str) or not subject:
            raise InvalidCredential("the token names no subject (sub)")
        return Principal(subject, scheme=scheme, scopes=token_scopes(claims), claims=claims)

    async def _issuer(self) -> str | None:
        if self.issuer is None or isinstance(self.issuer, str):
            return self.issuer
        return await self.issuer.issuer()


def _audience(audience: str | Sequence[str] | None) -> str | list[str] | None:
    """The audience tokens must name; a ValueError for an empty one, which no token should
    match (or, for an empty list, every token fails)."""
    if audience is None or isinstance(audience, str):
        return None if audience is None else not_empty(audience, "the audience")
    audiences = [not_empty(one, "an audience") for one in audience]
    if not audiences:
        raise ValueError("the audience list is empty: give one, or None for any audience")
    return audiences


def token_scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token grants: its `scope` (RFC 8693: space-separated) or `scp` claim."""
    granted = claims.get("scope", claims.get("scp"))
    if isinstance(granted, str):
        return frozenset(granted.split())
    if isinstance(granted, list):
        return frozenset(s for s in granted if isinstance(s, str))
    return frozenset()


def _reason(exc: jwt.InvalidTokenError) -> str:
    """Why PyJWT refused a token, in words a client can act on."""
    if isinstance(exc, jwt.ExpiredSignatureError):
        return "the token has expired"
    if isinstance(exc, jwt.ImmatureSignatureError):
        return "the token is not valid yet"
    if isinstance(exc, jwt.InvalidAudienceError):
        return "the token is not meant for this agent (wrong audience)"
    if isinstance(exc, jwt.InvalidIssuerError):
        return "the token is not from the trusted issuer"
    if isinstance(exc, jwt.MissingRequiredClaimError):
        return f"the token has no {exc.claim!r} claim"
    if isinstance(exc, jwt.InvalidSignatureError):
        return "the token's signature does not verify"
    return f"the token is not valid: {_shown(str(exc))}"


def _shown(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters: what a refusal may repeat of a token's content."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
