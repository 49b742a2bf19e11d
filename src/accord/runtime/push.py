"""PushSender: delivers task updates to the webhooks clients registered, in order, with retries."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from accord.types import PushNotificationConfig

log = logging.getLogger("accord.push")

TOKEN_HEADER = "X-A2A-Notification-Token"


@dataclass(frozen=True, slots=True)
class _Delivery:
    configs: Sequence[PushNotificationConfig]
    body: bytes


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
        self._queues: dict[str, asyncio.Queue[_Delivery]] = {}
        self._workers: set[asyncio.Task[None]] = set()

    def send(self, task_id: str, configs: Sequence[PushNotificationConfig], body: bytes) -> None:
        """Queue `body` (JSON) for every webhook in `configs`."""
        if not configs:
            return
        queue = self._queues.get(task_id)
        if queue is None:
            queue = self._queues[task_id] = asyncio.Queue()
            worker = asyncio.create_task(self._drain(task_id, queue), name=f"accord-push-{task_id}")
            self._workers.add(worker)
            worker.add_done_callback(self._workers.discard)
        queue.put_nowait(_Delivery(tuple(configs), body))

    async def close(self) -> None:
        """Stop delivering (what is still queued is dropped) and release connections."""
        for worker in list(self._workers):
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        if self._owns_http:
            await self._http.aclose()

    async def _drain(self, task_id: str, queue: asyncio.Queue[_Delivery]) -> None:
        try:
            while not queue.empty():
                delivery = queue.get_nowait()
                for config in delivery.configs:
                    await self._post(task_id, config, delivery.body)
        finally:
            if self._queues.get(task_id) is queue:
                del self._queues[task_id]

    async def _post(self, task_id: str, config: PushNotificationConfig, body: bytes) -> None:
        headers = {"Content-Type": "application/json", **_credentials(config)}
        for attempt in range(1, self.attempts + 1):
            try:
                response = await self._http.post(config.url, content=body, headers=headers)
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
