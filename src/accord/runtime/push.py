"""PushSender: delivers task updates to the webhooks clients registered, in order, with retries."""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace

import httpx

from accord.runtime.records import EventRecord
from accord.types import PushNotificationConfig, Task, TaskStatusUpdateEvent, new_id

log = logging.getLogger("accord.push")

TOKEN_HEADER = "X-A2A-Notification-Token"

TASK_SNAPSHOTS = "task"
"""The payload format of webhooks registered in A2A 0.1 to 0.3 (and of configs stored before
formats existed): the whole task, as JSON, after each status change."""


class PushFormat(ABC):
    """What one kind of webhook is sent: which of a task's records, in what body.

    A push config remembers the `name` of the format chosen by the codec that received it; the
    sender finds the format by that name among those registered (`register_push_format`).
    """

    name: str
    media_type: str = "application/json"

    @abstractmethod
    def body(self, record: EventRecord, task: Task) -> bytes | None:
        """The body announcing `record` (`task` is the task as of it), or None to send nothing."""


@dataclass(frozen=True, slots=True)
class PushTarget:
    """A webhook of a task: its config and the name of the PushFormat it is sent in."""

    config: PushNotificationConfig
    payload_format: str = TASK_SNAPSHOTS

    def identified(self) -> PushTarget:
        """This target, its config given a new id if it has none (as stores save configs)."""
        if self.config.id is not None:
            return self
        return replace(self, config=self.config.model_copy(update={"id": new_id()}))


class TaskSnapshots(PushFormat):
    """The task's canonical JSON (0.1-0.3's Task object) whenever its status changed."""

    name = TASK_SNAPSHOTS

    def body(self, record: EventRecord, task: Task) -> bytes | None:
        if isinstance(record.event, TaskStatusUpdateEvent | Task):
            return task.to_json()
        return None


_FORMATS: dict[str, PushFormat] = {}


def register_push_format(push_format: PushFormat) -> PushFormat:
    """Make `push_format` known by its name (codecs register the formats of their versions)."""
    _FORMATS[push_format.name] = push_format
    return push_format


register_push_format(TaskSnapshots())


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
            push_format = _FORMATS.get(target.payload_format)
            if push_format is None:
                log.warning("push to %s for task %s skipped: unknown payload format %r",
                            target.config.url, task_id, target.payload_format)  # fmt: skip
                continue
            if push_format.name not in bodies:
                bodies[push_format.name] = push_format.body(record, task)
            body = bodies[push_format.name]
            if body is not None:
                posts.append(_Post(target.config, body, push_format.media_type))
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
