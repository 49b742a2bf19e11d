"""Push notification tokens: the JWT a server signs for each webhook POST, its claims and header."""

from __future__ import annotations

import hashlib
import time
import uuid
from typing import Any

import jwt

from accord.keys.store import SigningKey

SIGNATURE_HEADER = "X-A2A-Notification-Signature"
"""The header carrying the notification's JWT (`Authorization` stays the webhook's own)."""
TOKEN_HEADER = "X-A2A-Notification-Token"
"""The header carrying the config's `token`, as the A2A specification says."""
DELIVERY_ID_HEADER = "X-A2A-Delivery-Id"
"""A notification's delivery id: the same on every try of it, so a receiver can dedupe."""
TASK_ID_CLAIM = "task_id"
DELIVERY_ID_CLAIM = "delivery_id"
"""The delivery id (as in `X-A2A-Delivery-Id`), signed: the same in every try's token, while
`jti` is new in each (a receiver accepts a token once, and a retry must be accepted)."""
BODY_HASH_CLAIM = "body_sha256"
"""The SHA-256 of the exact body bytes, in lowercase hex."""
DEFAULT_LIFETIME = 300.0
"""How long a notification token is valid; each retry signs a new one."""


def body_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def sign_notification(
    key: SigningKey,
    *,
    issuer: str,
    audience: str,
    task_id: str,
    body: bytes,
    lifetime: float = DEFAULT_LIFETIME,
    now: float | None = None,
    delivery_id: str | None = None,
) -> str:
    """The JWT announcing `body` about `task_id` to the webhook at `audience` (as a try of the
    delivery `delivery_id`, if given)."""
    issued = int(now if now is not None else time.time())
    claims: dict[str, Any] = {
        "iss": issuer,
        "aud": audience,
        "iat": issued,
        "exp": issued + int(lifetime),
        "jti": uuid.uuid4().hex,
        TASK_ID_CLAIM: task_id,
        BODY_HASH_CLAIM: body_hash(body),
    }
    if delivery_id is not None:
        claims[DELIVERY_ID_CLAIM] = delivery_id
    return jwt.encode(claims, key.private_key, algorithm=key.alg, headers={"kid": key.kid})
