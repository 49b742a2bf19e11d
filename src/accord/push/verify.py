"""verify: check a push notification an accord agent sent (signature, audience, expiry, body)."""

from __future__ import annotations

import hmac
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jwt
from jwt.exceptions import PyJWTError

from accord.codecs.base import validated
from accord.codecs.protojson import STREAM_RESPONSE
from accord.errors import A2AError
from accord.keys.cards import TrustedKeys
from accord.keys.jwks_client import JwksClient, JwksError, KeySetUnavailable
from accord.keys.notifications import (
    BODY_HASH_CLAIM,
    DELIVERY_ID_CLAIM,
    DELIVERY_ID_HEADER,
    SIGNATURE_HEADER,
    TASK_ID_CLAIM,
    TOKEN_HEADER,
    body_hash,
)
from accord.types import StreamEvent, adapters

ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "EdDSA")
"""Algorithms a notification may be signed with (never `none` or a shared-secret HMAC)."""
MAX_LIFETIME = 3600.0
"""A token valid longer than this is refused: replays are remembered only that long."""


class NotificationRefused(Exception):
    """A notification that did not come, as it is, from the agent trusted."""


class KeysUnavailable(NotificationRefused):
    """The agent's keys could not be fetched now (the agent or its key set is down): nothing
    is known against the notification, so a webhook should ask for it again later (503)
    rather than refuse it for good."""


@dataclass(frozen=True, slots=True)
class Notification:
    """A verified notification: the task it is about, its exact body and its token's claims."""

    task_id: str
    body: bytes
    claims: dict[str, Any]
    delivery_id: str | None = None
    """The sender's id of this notification: the same on every try, so one that arrives twice
    (delivery is at least once) can be recognized. It is the token's `delivery_id` claim
    (which an `X-A2A-Delivery-Id` header sent with it must equal); from a sender that signs
    none, the header alone."""

    def json(self) -> Any:
        """The body parsed (a Task, or a 1.0 StreamResponse)."""
        return json.loads(self.body)

    def event(self) -> StreamEvent:
        """The body as the event it stands for, whichever payload format the webhook was
        registered in: a `Task` (the task's snapshot), or, from a webhook registered over
        A2A 1.0, the `Task`, `Message`, `TaskStatusUpdateEvent` or `TaskArtifactUpdateEvent`
        its StreamResponse holds. NotificationRefused for a body that is none of these."""
        body = self.json()
        stream_response = isinstance(body, dict) and not body.keys().isdisjoint(_STREAM_MEMBERS)
        try:
            event: StreamEvent = _STREAM_RESPONSE(body) if stream_response else _TASK(body)
        except A2AError as exc:
            raise NotificationRefused(f"the body is not an A2A event: {exc.message}") from None
        return event


_STREAM_MEMBERS = frozenset({"task", "message", "statusUpdate", "artifactUpdate"})
_STREAM_RESPONSE = validated(adapters.STREAM_EVENT, STREAM_RESPONSE.from_v1)
_TASK = validated(adapters.TASK)


class SeenTokens:
    """Token ids already accepted, each kept until its token expires (replays are refused)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._expiries: dict[str, float] = {}
        self._clock = clock
        self._lock = threading.Lock()
        self._prune_at = 1024

    def first_use(self, jti: str, expires: float) -> bool:
        """Remember `jti` until `expires`; False if it was already seen."""
        now = self._clock()
        with self._lock:
            if len(self._expiries) >= self._prune_at:  # amortized: the size doubles in between
                self._expiries = {k: v for k, v in self._expiries.items() if v > now}
                self._prune_at = max(1024, 2 * len(self._expiries))
            if self._expiries.get(jti, 0.0) > now:
                return False
            self._expiries[jti] = expires
            return True


_SEEN = SeenTokens()
_JWKS_CLIENTS: dict[str, JwksClient] = {}


async def verify(
    body: bytes,
    headers: Mapping[str, str],
    *,
    keys: TrustedKeys | str,
    audience: str,
    token: str | None = None,
    issuer: str | None = None,
    seen: SeenTokens | None = None,
    leeway: float = 30.0,
) -> Notification:
    """Check a notification POSTed to your webhook; NotificationRefused says what is wrong.

    `body` is the request's exact bytes and `headers` its headers. `keys` are the agent's
    public keys: its JWKS URL (`https://agent.example/.well-known/jwks.json`, fetched and
    cached, refetched for an unknown key id) or a `JwksClient`/`StaticKeys`. `audience` is the
    webhook URL exactly as you registered it; `token`, the config's token, if you set one;
    `issuer`, the agent's URL, to check that too. Each token is accepted once (`seen`: where
    accepted token ids are remembered until they expire; default: one memory per process).
    A token that signs the delivery id is refused if `X-A2A-Delivery-Id` says another.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    if token is not None and not hmac.compare_digest(
        lowered.get(TOKEN_HEADER.lower(), "").encode(), token.encode()
    ):
        raise NotificationRefused(f"the {TOKEN_HEADER} header is missing or wrong")
    signed = lowered.get(SIGNATURE_HEADER.lower())
    if not signed:
        raise NotificationRefused(f"the {SIGNATURE_HEADER} header is missing")
    claims = await _claims(signed, _trusted(keys), audience, issuer, leeway)
    if not hmac.compare_digest(str(claims[BODY_HASH_CLAIM]), body_hash(body)):
        raise NotificationRefused("the body is not the one the agent signed")
    if claims["exp"] - claims["iat"] > MAX_LIFETIME:
        raise NotificationRefused("the token is valid for too long")
    delivery_id = _delivery_id(claims, lowered.get(DELIVERY_ID_HEADER.lower()))
    if not (seen or _SEEN).first_use(str(claims["jti"]), float(claims["exp"]) + leeway):
        raise NotificationRefused("this notification was already received (replayed token)")
    return Notification(str(claims[TASK_ID_CLAIM]), body, claims, delivery_id)


def _delivery_id(claims: dict[str, Any], header: str | None) -> str | None:
    """The signed delivery id, checked against the header; else the header's (older senders)."""
    signed = claims.get(DELIVERY_ID_CLAIM)
    if signed is None:
        return header
    if not isinstance(signed, str):
        raise NotificationRefused(f"the token's {DELIVERY_ID_CLAIM} claim is not a string")
    if header is not None and not hmac.compare_digest(header.encode(), signed.encode()):
        raise NotificationRefused(
            f"the {DELIVERY_ID_HEADER} header is not the delivery id the agent signed"
        )
    return signed


async def _claims(
    signed: str, keys: TrustedKeys, audience: str, issuer: str | None, leeway: float
) -> dict[str, Any]:
    try:
        header = jwt.get_unverified_header(signed)
        kid = header.get("kid")
        key = await keys.key(kid if isinstance(kid, str) else None)
        algorithm = key.algorithm_name
        if algorithm not in ALGORITHMS or header.get("alg") != algorithm:
            raise NotificationRefused(f"key {kid!r} does not sign with {header.get('alg')!r}")
        claims: dict[str, Any] = jwt.decode(
            signed,
            key,
            algorithms=[algorithm],
            audience=audience,
            issuer=issuer,
            leeway=leeway,
            options={"require": ["exp", "iat", "jti", "aud", "iss"]},
        )
    except KeySetUnavailable as exc:
        raise KeysUnavailable(f"the agent's keys cannot be fetched now: {exc}") from None
    except JwksError as exc:
        raise NotificationRefused(f"no trusted key: {exc}") from None
    except PyJWTError as exc:
        raise NotificationRefused(f"the token is not valid: {exc}") from None
    for claim in (TASK_ID_CLAIM, BODY_HASH_CLAIM):
        if not isinstance(claims.get(claim), str):
            raise NotificationRefused(f"the token has no {claim} claim")
    return claims


def _trusted(keys: TrustedKeys | str) -> TrustedKeys:
    if not isinstance(keys, str):
        return keys
    client = _JWKS_CLIENTS.get(keys)
    if client is None:
        client = _JWKS_CLIENTS[keys] = JwksClient(keys)
    return client
