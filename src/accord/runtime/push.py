"""PushSender: delivers task updates to registered webhooks, in order, signed, with retries."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from accord.core.push import PushTarget, push_format
from accord.core.records import EventRecord
from accord.keys.notifications import (
    DEFAULT_LIFETIME,
    SIGNATURE_HEADER,
    TOKEN_HEADER,
    sign_notification,
)
from accord.keys.store import KeyStore
from accord.runtime.webhook_guard import WebhookGuard, WebhookRefused
from accord.types import PushNotificationConfig, Task

log = logging.getLogger("accord.push")

RETRIED_STATUSES = frozenset({408, 425, 429})
"""Besides 5xx, the answers that may change if the POST is tried again later."""

__all__ = ["SIGNATURE_HEADER", "TOKEN_HEADER", "PushSender"]


@dataclass(frozen=True, slots=True)
class _Post:
    config: PushNotificationConfig
    body: bytes
    media_type: str


class PushSender:
    """POSTs notification bodies to webhooks without ever holding up the agent.

    Deliveries of one task go out in the order they were queued, one at a time; different
    tasks do not wait for each other. Each POST gets `timeout` seconds and up to `attempts`
    tries with exponential backoff; a webhook that still fails is logged and skipped, and no
    failure of one delivery stops the next. Each try is checked by `guard` (resolved, refused
    if the address is not public unless allowed) and sent to the address checked, never
    following a redirect, and carries a JWT signed with `keys`' active key (`issuer`: the
    agent's URL; see accord.keys.notifications) in `X-A2A-Notification-Signature`.
    """

    def __init__(
        self,
        http: httpx.AsyncClient | None = None,
        *,
        keys: KeyStore | None = None,
        guard: WebhookGuard | None = None,
        issuer: str | None = None,
        timeout: float = 10.0,
        attempts: int = 3,
        backoff: float = 0.5,
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
        self.issuer = issuer
        self.attempts = attempts
        self.backoff = backoff
        self.token_lifetime = token_lifetime
        self._queues: dict[str, asyncio.Queue[Sequence[_Post]]] = {}
        self._workers: set[asyncio.Task[None]] = set()

    @property
    def busy(self) -> bool:
        """Whether any delivery is queued or under way."""
        return bool(self._queues)

    def note_base_url(self, base_url: str) -> None:
        """Sign as the agent at `base_url` when no issuer was configured."""
        if self.issuer is None and base_url:
            self.issuer = base_url

    def send(
        self, task_id: str, targets: Sequence[PushTarget], record: EventRecord, task: Task
    ) -> None:
        """Queue the notification of `record` for every webhook in `targets`, each in its own
        payload format (made now, once per format: `task` moves on)."""
        bodies: dict[str, bytes | None] = {}
        posts: list[_Post] = []
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
                posts.append(_Post(target.config, body, found.media_type))
        if not posts:
            return
        queue = self._queues.get(task_id)
        if queue is None:
            queue = self._queues[task_id] = asyncio.Queue()
            worker = asyncio.create_task(self._drain(task_id, queue), name=f"accord-push-{task_id}")
            self._workers.add(worker)
            worker.add_done_callback(self._workers.discard)
        queue.put_nowait(posts)

    async def close(self) -> None:
        """Stop delivering (what is still queued is dropped) and release connections."""
        for worker in list(self._workers):
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        if self._owns_http:
            await self._http.aclose()

    async def _drain(self, task_id: str, queue: asyncio.Queue[Sequence[_Post]]) -> None:
        try:
            while not queue.empty():
                for post in queue.get_nowait():
                    try:
                        await self._post(task_id, post)
                    except Exception:  # one broken delivery must not stop the others
                        log.exception("push to %s for task %s failed", post.config.url, task_id)
        finally:
            if self._queues.get(task_id) is queue:
                del self._queues[task_id]

    async def _post(self, task_id: str, post: _Post) -> None:
        config = post.config
        problem = "not tried"
        for attempt in range(1, self.attempts + 1):
            try:
                status = await self._post_once(task_id, post)
                if 200 <= status < 300:
                    return
                problem = f"HTTP {status}"
                if status not in RETRIED_STATUSES and status < 500:
                    break  # a redirect (never followed) or a refusal: trying again changes nothing
            except WebhookRefused as exc:
                if exc.lasting:
                    log.warning("push to %s for task %s refused: %s", config.url, task_id,
                                exc.reason)  # fmt: skip
                    return
                problem = exc.reason
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if attempt < self.attempts:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
        log.warning("push to %s for task %s failed after %d tries (%s)", config.url, task_id,
                    attempt, problem)  # fmt: skip

    async def _post_once(self, task_id: str, post: _Post) -> int:
        """POST once to the address the guard checks now; the status (the body is not read)."""
        destination = await self.guard.check(post.config.url)
        headers = {
            "Host": destination.host_header(),
            "Content-Type": post.media_type,
            SIGNATURE_HEADER: sign_notification(
                self.keys.active(),
                issuer=self.issuer or "",
                audience=post.config.url,
                task_id=task_id,
                body=post.body,
                lifetime=self.token_lifetime,
            ),
            **_credentials(post.config),
        }
        extensions = {}
        if destination.url.scheme == "https":
            # The certificate is checked against the name; the pool is keyed by address, so a
            # connection is not kept for another name on the same address.
            extensions["sni_hostname"] = destination.url.host
            headers["Connection"] = "close"
        request = self._http.build_request(
            "POST", destination.request_url(), content=post.body, headers=headers,
            extensions=extensions,
        )  # fmt: skip
        response = await self._http.send(request, stream=True, follow_redirects=False)
        await response.aclose()  # what the webhook answers beyond its status is not read
        return response.status_code


def _credentials(config: PushNotificationConfig) -> dict[str, str]:
    headers: dict[str, str] = {}
    if config.token:
        headers[TOKEN_HEADER] = config.token
    auth = config.authentication
    if auth is not None and auth.credentials:
        scheme = next((s for s in auth.schemes if s), "Bearer")
        headers["Authorization"] = f"{scheme} {auth.credentials}"
    return headers
