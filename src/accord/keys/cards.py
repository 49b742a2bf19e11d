"""Agent card signatures: JWS (RFC 7515, detached) over the JCS (RFC 8785) canonical card."""

from __future__ import annotations

import binascii
import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import rfc8785
from jwt import PyJWK, api_jws
from jwt.exceptions import PyJWKError, PyJWTError
from jwt.utils import base64url_decode, base64url_encode

from accord.keys.jwks_client import JwksError
from accord.keys.store import SigningKey

JWKS_PATH = "/.well-known/jwks.json"
"""Where an accord agent publishes the public keys its cards and notifications are signed with."""
CARD_ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "EdDSA")
"""The algorithms a card signature may use (never `none` or a shared-secret HMAC)."""
_MAX_DEPTH = 64


class CardSignatureError(Exception):
    """A card carries no signature that verifies with a trusted key."""


class TrustedKeys(Protocol):
    """Where verification keys come from: a `JwksClient`, or `StaticKeys`."""

    async def key(self, kid: str | None) -> PyJWK: ...


class StaticKeys:
    """A fixed set of trusted public keys (a JWKS document or its `keys` list)."""

    def __init__(self, jwks: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> None:
        entries = jwks.get("keys", []) if isinstance(jwks, Mapping) else list(jwks)
        try:
            keys = [PyJWK(dict(entry)) for entry in entries]
        except PyJWKError as exc:
            raise JwksError(f"not a usable key: {exc}") from exc
        self._keys = {key.key_id: key for key in keys}

    async def key(self, kid: str | None) -> PyJWK:
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        found = self._keys.get(kid)
        if found is None:
            raise JwksError(f"no trusted key with id {kid!r}")
        return found


def canonical_card(card: Mapping[str, Any]) -> bytes:
    """The bytes a card's signatures cover: the card without `signatures`, its empty values
    (null, "", [], {}) left out as the specification's field-presence rules leave them,
    serialized by JCS."""
    content = {name: value for name, value in card.items() if name != "signatures"}
    try:
        return rfc8785.dumps(_without_empty(content, 1) or {})
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as exc:
        raise CardSignatureError(f"the card has no canonical form: {exc}") from exc


def requirements_unsigned(card: Mapping[str, Any]) -> bool:
    """Whether `card` declares security schemes but no requirement that names one (0.3's
    `security`, 1.0's `securityRequirements`). Then its signature cannot say whether the
    agent asked for credentials: a requirement without scopes (`{"bearer": []}`) is empty
    values only, which the canonical form leaves out, so removing it leaves the signature
    valid."""
    if not card.get("securitySchemes"):
        return False
    requirements = [
        *(card.get("security") or []),
        *(card.get("securityRequirements") or []),
    ]
    return not any(_names_a_scheme(requirement) for requirement in requirements)


def _names_a_scheme(requirement: Any) -> bool:
    """Whether a requirement (0.3: scheme -> scopes; 1.0: `{"schemes": {...}}`) names one."""
    if not isinstance(requirement, Mapping):
        return False
    schemes = requirement.get("schemes") if "schemes" in requirement else requirement
    return bool(schemes)


def sign_card(
    card: Mapping[str, Any], key: SigningKey, *, jku: str | None = None
) -> dict[str, Any]:
    """`card` with one more signature, by `key` (protected header: alg, typ JOSE, kid, jku)."""
    headers: dict[str, Any] = {"typ": "JOSE", "kid": key.kid}
    if jku is not None:
        headers["jku"] = jku
    compact = api_jws.encode(
        canonical_card(card),
        key.private_key,
        algorithm=key.alg,
        headers=headers,
    )
    # RFC 7515 appendix F: a detached payload is the compact form without its middle part.
    protected, _, signature = compact.split(".")
    signatures = [*(card.get("signatures") or []), {"protected": protected, "signature": signature}]
    return {**card, "signatures": signatures}


async def verify_card(card: Mapping[str, Any], keys: TrustedKeys) -> str:
    """The key id of the first of `card`'s signatures that verifies with one of `keys`;
    CardSignatureError when none does (or the card has none)."""
    signatures = card.get("signatures")
    if not isinstance(signatures, list) or not signatures:
        raise CardSignatureError("the card is not signed")
    encoded = base64url_encode(canonical_card(card)).decode("ascii")
    problems: list[str] = []
    for signature in signatures:
        try:
            return await _verify_one(signature, encoded, keys)
        except CardSignatureError as exc:
            problems.append(str(exc))
    raise CardSignatureError("no signature of the card verifies: " + "; ".join(problems))


async def _verify_one(signature: Any, encoded: str, keys: TrustedKeys) -> str:
    if not isinstance(signature, Mapping):
        raise CardSignatureError("a signature is not an object")
    protected, value = signature.get("protected"), signature.get("signature")
    if not isinstance(protected, str) or not isinstance(value, str):
        raise CardSignatureError("a signature lacks `protected` or `signature`")
    try:
        header = json.loads(base64url_decode(protected))
    except (binascii.Error, ValueError):
        raise CardSignatureError("a protected header is not base64url JSON") from None
    if not isinstance(header, dict):
        raise CardSignatureError("a protected header is not a JSON object")
    kid = header.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise CardSignatureError("a protected header's kid is not a string")
    try:
        key = await keys.key(kid)
    except JwksError as exc:
        raise CardSignatureError(str(exc)) from None
    algorithm = key.algorithm_name
    if algorithm not in CARD_ALGORITHMS or header.get("alg") != algorithm:
        raise CardSignatureError(f"key {kid!r} does not sign with {header.get('alg')!r}")
    try:
        api_jws.decode_complete(f"{protected}.{encoded}.{value}", key, algorithms=[algorithm])
    except PyJWTError as exc:
        raise CardSignatureError(f"signature by key {kid!r}: {exc}") from None
    return kid or ""


def _without_empty(value: Any, depth: int) -> Any:
    """`value` without null, "", [] and {} (recursively); None if nothing is left."""
    if depth > _MAX_DEPTH:
        raise ValueError(f"nested deeper than {_MAX_DEPTH} levels")
    if isinstance(value, Mapping):
        kept = {
            name: cleaned
            for name, item in value.items()
            if (cleaned := _without_empty(item, depth + 1)) is not None
        }
        return kept or None
    if isinstance(value, list):
        items = [
            cleaned for item in value if (cleaned := _without_empty(item, depth + 1)) is not None
        ]
        return items or None
    if value is None or value == "":
        return None
    return value
