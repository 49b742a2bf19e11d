"""PushSender: delivers task updates to the webhooks clients registered, in order, with retries."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from accord.core.push import PushTarget, push_format
from accord.core.records import EventRecord
from accord.types import PushNotificationConfig, Task

log = logging.getLogger("accord.push")

TOKEN_HEADER = "X-A2A-Notification-Token"


@dataclass(frozen=True, slots=True)
class _Post:
    config: PushNotificationConfig
    body: bytes
    media_type: str


class PushSender:
    """POSTs notification bodies to webhooks without ever holding up the agent.

    Deliveries of one task go out in the order they were queued, one at a time; different
    tasks do not wait for each other. Each POST gets `timeout` seconds and up to `attempts`
    tries with exponential backoff; a webhook that still fails is logged and skipped.
    """

    def __init__(
        self,
        http: httpx.AsyncClient | None = None,
        *,
        timeout: float = 10.0,
        attempts: int = 3,
        backoff: float = 0.5,
    ) -> None:
        self._http = http if http is not None else httpx.AsyncClient(timeout=timeout)
        self._owns_http = http is None
        self.attempts = attempts
        self.backoff = backoff
        self._queues: dict[str, asyncio.Queue[Sequence[_Post]]] = {}
        self._workers: set[asyncio.Task[None]] = set()

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
                    await self._post(task_id, post)
        finally:
            if self._queues.get(task_id) is queue:
                del self._queues[task_id]

    async def _post(self, task_id: str, post: _Post) -> None:
        config = post.config
        headers = {"Content-Type": post.media_type, **_credentials(config)}
        for attempt in range(1, self.attempts + 1):
            try:
                response = await self._http.post(config.url, content=post.body, headers=headers)
                if response.is_success:
                    return
                problem = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if attempt < self.attempts:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
        log.warning("push to %s for task %s failed %d times (%s)", config.url, task_id,
                    self.attempts, problem)  # fmt: skip


def _credentials(config: PushNotificationConfig) -> dict[str, str]:
    headers: dict[str, str] = {}
    if config.token:
        headers[TOKEN_HEADER] = config.token
    auth = config.authentication
    if auth is not None and auth.credentials:
        scheme = next((s for s in auth.schemes if s), "Bearer")
        headers["Authorization"] = f"{scheme} {auth.credentials}"
    return headers
