"""PushSender: one guarded, signed POST of a notification; the bodies of each payload format."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx

from accord.core.deliveries import Delivery
from accord.core.outbound import OutboundObserver, outbound_request
from accord.core.push import PushTarget, push_format
from accord.core.records import EventRecord
from accord.keys.notifications import (
    DEFAULT_LIFETIME,
    DELIVERY_ID_HEADER,
    SIGNATURE_HEADER,
    TOKEN_HEADER,
    sign_notification,
)
from accord.keys.store import KeyStore
from accord.types import PushNotificationConfig, Task
from accord.web.webhook_guard import WebhookGuard, WebhookRefused

log = logging.getLogger("accord.push")

RETRIED_STATUSES = frozenset({408, 425, 429})
"""Besides 5xx, the answers that may change if the POST is tried again later."""
ISSUER_UNKNOWN = (
    "not sent: the agent's URL, its issuer, is not known yet (no request, no public URL)"
)

__all__ = ["DELIVERY_ID_HEADER", "SIGNATURE_HEADER", "TOKEN_HEADER", "Attempt", "PushSender"]


@dataclass(frozen=True, slots=True)
class _Post:
    config: PushNotificationConfig
    body: bytes
    media_type: str
    issuer: str
    delivery_id: str | None = None
    trace: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Attempt:
    """How one try of a delivery went: `delivered`, or why not and whether a later try may
    go better (`retry`)."""

    delivered: bool
    retry: bool = False
    problem: str = ""


class PushSender:
    """POSTs one notification to its webhook, guarded and signed: one try of a delivery.

    Each try is checked by `guard` (resolved, refused if the address is not public unless
    allowed) and sent to the address checked, never following a redirect, within `timeout`
    seconds per step; it carries a JWT signed with `keys`' active key in
    `X-A2A-Notification-Signature`, and the delivery's id both in `X-A2A-Delivery-Id` and,
    signed, in the token's `delivery_id` claim. Its `iss` is the agent's URL (see
    accord.keys.notifications): the one the delivery was recorded with, else `issuer` (the
    public URL, or the base URL of the first request served: `note_base_url`, which the server
    calls only with a URL it trusts, at an allowed `Host`); while neither is known, a try
    fails without sending, to be retried. Retries, order and parking are the
    DeliveryWorker's (accord.runtime.delivery).
    """

    def __init__(
        self,
        http: httpx.AsyncClient | None = None,
        *,
        keys: KeyStore | None = None,
        guard: WebhookGuard | None = None,
        issuer: str | None = None,
        timeout: float = 10.0,
        token_lifetime: float = DEFAULT_LIFETIME,
    ) -> None:
        # trust_env=False: a proxy from the environment would connect to the name, not the
        # address the guard checked.
        self._http = (
            http
            if http is not None
            else httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False)
        )
        self._owns_http = http is None
        self.keys = keys if keys is not None else KeyStore.ephemeral()
        self.guard = guard if guard is not None else WebhookGuard()
        self.issuer = issuer or None
        self.token_lifetime = token_lifetime
        self.watchers: list[OutboundObserver] = []
        """What watches this sender's POSTs besides the process's observers (an app's metrics)."""

    def note_base_url(self, base_url: str) -> None:
        """Sign as the agent at `base_url` when no issuer was configured."""
        if self.issuer is None and base_url:
            self.issuer = base_url

    async def attempt(self, delivery: Delivery) -> Attempt:
        """Try an outbox delivery once; how it went."""
        try:
            issuer = delivery.issuer or self.issuer
            if not issuer:  # a token naming no issuer would fail every receiver checking it
                return Attempt(False, retry=True, problem=ISSUER_UNKNOWN)
            config = PushNotificationConfig.model_validate_json(delivery.config)
            post = _Post(
                config, delivery.body, delivery.media_type, issuer, delivery.id,
                delivery.trace_context,
            )  # fmt: skip
            status = await self._post_once(delivery.task_id, post)
        except WebhookRefused as exc:
            return Attempt(False, retry=not exc.lasting, problem=exc.reason)
        except httpx.HTTPError as exc:
            return Attempt(False, retry=True, problem=f"{type(exc).__name__}: {exc}")
        except (ValueError, UnicodeError) as exc:  # a config stored before today's checks
            return Attempt(False, problem=f"{type(exc).__name__}: {exc}")
        if 200 <= status < 300:
            return Attempt(True)
        # A redirect (never followed) or a refusal: trying again changes nothing.
        return Attempt(False, retry=status in RETRIED_STATUSES or status >= 500,
                       problem=f"HTTP {status}")  # fmt: skip

    async def close(self) -> None:
        """Release connections."""
        if self._owns_http:
            await self._http.aclose()

    async def _post_once(self, task_id: str, post: _Post) -> int:
        """POST once to the address the guard checks now; the status (the body is not read)."""
        destination = await self.guard.check(post.config.url)
        headers = {
            "Host": destination.host_header(),
            "Content-Type": post.media_type,
            SIGNATURE_HEADER: sign_notification(
                self.keys.active(),
                issuer=post.issuer,
                audience=post.config.url,
                task_id=task_id,
                body=post.body,
                lifetime=self.token_lifetime,
                delivery_id=post.delivery_id,
            ),
            **_credentials(post.config),
        }
        if post.delivery_id is not None:
            headers[DELIVERY_ID_HEADER] = post.delivery_id
        extensions = {}
        if destination.url.scheme == "https":
            # The certificate is checked against the name; the pool is keyed by address, so a
            # connection is not kept for another name on the same address.
            extensions["sni_hostname"] = destination.url.host
            headers["Connection"] = "close"
        # The trace of the event's request goes on even where this process traces nothing.
        headers.update(post.trace)
        with outbound_request("push", post.config.url, self.watchers, post.trace) as watched:
            headers.update(watched.headers)  # the POST's own span's context, when traced
            request = self._http.build_request(
                "POST", destination.request_url(), content=post.body, headers=headers,
                extensions=extensions,
            )  # fmt: skip
            response = await self._http.send(request, stream=True, follow_redirects=False)
            await response.aclose()  # what the webhook answers beyond its status is not read
            watched.status = response.status_code
        return response.status_code


def notification_bodies(
    task_id: str, targets: Sequence[PushTarget], record: EventRecord, task: Task
) -> list[tuple[PushTarget, bytes, str]]:
    """Each target that gets a notification of `record`, with its body in the target's payload
    format and the body's media type (made now, once per format: `task` moves on)."""
    bodies: dict[str, bytes | None] = {}
    found_bodies: list[tuple[PushTarget, bytes, str]] = []
    for target in targets:
        found = push_format(target.payload_format)
        if found is None:
            log.warning("push to %s for task %s skipped: unknown payload format %r",
                        target.config.url, task_id, target.payload_format)  # fmt: skip
            continue
        if found.name not in bodies:
            bodies[found.name] = found.body(record, task)
        body = bodies[found.name]
        if body is not None:
            found_bodies.append((target, body, found.media_type))
    return found_bodies


def _credentials(config: PushNotificationConfig) -> dict[str, str]:
    headers: dict[str, str] = {}
    if config.token:
        headers[TOKEN_HEADER] = config.token
    auth = config.authentication
    if auth is not None and auth.credentials:
        scheme = next((s for s in auth.schemes if s), "Bearer")
        headers["Authorization"] = f"{scheme} {auth.credentials}"
    return headers
