"""A bearer token read from an `Authorization` value, and a secret compared in constant time."""

from __future__ import annotations

import hmac


def bearer_token(authorization: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` value (the scheme in any case); None
    for another scheme, or none."""
    scheme, _, token = authorization.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def same_secret(given: str, expected: str) -> bool:
    """Whether `given` is `expected`, in a time that does not tell how much of it matched."""
    return hmac.compare_digest(given.encode(), expected.encode())
