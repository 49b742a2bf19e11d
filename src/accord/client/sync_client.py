"""SyncClient: the blocking twin of Client for scripts, running it on a background event loop."""

from __future__ import annotations

import queue
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from functools import partial, wraps
from types import TracebackType
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

import httpx
from anyio.from_thread import BlockingPortal, start_blocking_portal

from accord.client.client import DEFAULT_TIMEOUT, Client
from accord.client.credentials import Credential, Credentials
from accord.client.event_stream import EventStream, SyncEventStream
from accord.types import AgentCard, StreamEvent

if TYPE_CHECKING:
    from accord.keys.cards import TrustedKeys

P = ParamSpec("P")
T = TypeVar("T")


def _blocking(
    method: Callable[Concatenate[Client, P], Awaitable[T]],
) -> Callable[Concatenate[SyncClient, P], T]:
    """A SyncClient method running the Client coroutine method of the same name to its end."""

    @wraps(method)
    def call(self: SyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        bound: Callable[P, Awaitable[T]] = getattr(self._client, method.__name__)
        return self._portal.call(partial(bound, *args, **kwargs))

    return call


def _iterating(
    method: Callable[Concatenate[Client, P], EventStream],
) -> Callable[Concatenate[SyncClient, P], SyncEventStream]:
    """A SyncClient method giving the events of the Client stream method as a plain iterator."""

    @wraps(method)
    def call(self: SyncClient, /, *args: P.args, **kwargs: P.kwargs) -> SyncEventStream:
        stream = getattr(self._client, method.__name__)(*args, **kwargs)
        return SyncEventStream(self._iterate(stream))

    return call


class SyncClient:
    """The blocking client: the methods of `Client`, for code without an event loop.

    Use as `with SyncClient(url) as client:`; streams are plain iterators (SyncEventStream).
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        card: AgentCard | None = None,
        transport: str | None = None,
        version: str | None = None,
        credentials: Credentials | Sequence[Credential] | None = None,
        trusted_keys: TrustedKeys | str | None = None,
        extensions: Sequence[str] = (),
    ) -> None:
        self._client = Client(
            url,
            headers=headers,
            timeout=timeout,
            card=card,
            transport=transport,
            version=version,
            credentials=credentials,
            trusted_keys=trusted_keys,
            extensions=extensions,
        )
        self._portal_context = start_blocking_portal()
        self._portal: BlockingPortal = self._portal_context.__enter__()
        self._closed = False

    @property
    def url(self) -> str:
        return self._client.url

    @property
    def card(self) -> AgentCard | None:
        """The agent card, once resolved."""
        return self._client.card

    get_card = _blocking(Client.get_card)
    send = _blocking(Client.send)
    stream = _iterating(Client.stream)
    get_task = _blocking(Client.get_task)
    cancel_task = _blocking(Client.cancel_task)
    resubscribe = _iterating(Client.resubscribe)
    get_extended_card = _blocking(Client.get_extended_card)
    list_tasks = _blocking(Client.list_tasks)
    set_push_config = _blocking(Client.set_push_config)
    get_push_config = _blocking(Client.get_push_config)
    list_push_configs = _blocking(Client.list_push_configs)
    delete_push_config = _blocking(Client.delete_push_config)
    transport = _blocking(Client.transport)

    def close(self) -> None:
        """Close the connection pool and stop the background event loop."""
        if self._closed:
            return
        self._closed = True
        try:
            self._portal.call(self._client.aclose)
        finally:
            self._portal_context.__exit__(None, None, None)

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _iterate(
        self, stream: EventStream
    ) -> Generator[tuple[StreamEvent, int | None], None, None]:
        # The stream is consumed by a task on the loop thread and handed over through a queue;
        # leaving early cancels that task, whose `async with` closes the HTTP response.
        # Each event travels with the stream's last event id as of that event.
        events: queue.Queue[tuple[StreamEvent, int | None] | None] = queue.Queue()  # None: end

        async def pump() -> None:
            async with stream:
                async for event in stream:
                    events.put((event, stream.last_event_id))

        future = self._portal.start_task_soon(pump)
        future.add_done_callback(lambda _: events.put(None))
        try:
            while (item := events.get()) is not None:
                yield item
            future.result()
        finally:
            future.cancel()

    def __repr__(self) -> str:
        return f"SyncClient(url={self.url!r})"
