"""Client: the async A2A client over JSON-RPC, from an agent's URL to typed results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import aclosing
from types import TracebackType
from typing import TypeVar

import httpx
from pydantic import TypeAdapter

from accord.client.card_resolver import fetch_card
from accord.client.event_stream import EventStream, IdentifiedEvents
from accord.client.interfaces import jsonrpc_url
from accord.client.messages import send_params, user_message
from accord.client.transport import JsonRpcTransport
from accord.types import (
    A2AModel,
    AgentCard,
    Message,
    Metadata,
    Part,
    SendResult,
    StreamEvent,
    Task,
    TaskIdParams,
    TaskQueryParams,
)

T = TypeVar("T")

DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)
"""Per network operation; streams stay open as long as events or keep-alives keep coming."""

_TASK = TypeAdapter(Task)
_CARD = TypeAdapter(AgentCard)
_SEND_RESULT: TypeAdapter[Task | Message] = TypeAdapter(SendResult)
_STREAM_EVENT: TypeAdapter[StreamEvent] = TypeAdapter(StreamEvent)


class Client:
    """Talks to one A2A agent over JSON-RPC.

    `url` is the agent's base URL (or the URL of its card). The card is fetched on the first
    call and calls go to the JSON-RPC URL it declares. Use as `async with Client(url) as c:`.
    `http_client` lets you bring your own httpx client (then `timeout` is its business, and
    closing it stays yours); `headers` go with every request.
    """

    def __init__(
        self,
        url: str,
        *,
        http_client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        card: AgentCard | None = None,
    ) -> None:
        self.url = url
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient(timeout=timeout)
        self._headers = dict(headers or {})
        self._transport = JsonRpcTransport(self._http, self._headers)
        self._card = card

    @property
    def card(self) -> AgentCard | None:
        """The agent card, once resolved."""
        return self._card

    async def get_card(self) -> AgentCard:
        """The agent's public card (fetched once, then cached)."""
        if self._card is None:
            self._card = await fetch_card(self._http, self.url, self._headers)
        return self._card

    async def send(
        self,
        content: str | Message,
        *,
        parts: Sequence[Part] = (),
        task_id: str | None = None,
        context_id: str | None = None,
        blocking: bool = True,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        metadata: Metadata | None = None,
        reference_task_ids: Sequence[str] | None = None,
    ) -> Task | Message:
        """Send a message (`message/send`); the agent answers with a Task or a Message.

        `content` is text for a new user message (with extra `parts` after it) or a whole
        Message. With `blocking=False` the agent answers as soon as the task exists.
        """
        message = user_message(
            content,
            parts=parts,
            task_id=task_id,
            context_id=context_id,
            reference_task_ids=reference_task_ids,
        )
        params = send_params(
            message,
            blocking=blocking,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            metadata=metadata,
        )
        return await self._call("message/send", params, _SEND_RESULT)

    def stream(
        self,
        content: str | Message,
        *,
        parts: Sequence[Part] = (),
        task_id: str | None = None,
        context_id: str | None = None,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        metadata: Metadata | None = None,
        reference_task_ids: Sequence[str] | None = None,
    ) -> EventStream:
        """Send a message and follow the answer (`message/stream`).

        Yields the Task (or a single Message), then its status and artifact updates, until
        the server ends the stream (the task finished or waits for input). Should the
        connection break, `resubscribe` with the stream's `last_event_id` picks it up again.
        """
        message = user_message(
            content,
            parts=parts,
            task_id=task_id,
            context_id=context_id,
            reference_task_ids=reference_task_ids,
        )
        params = send_params(
            message,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            metadata=metadata,
        )
        return EventStream(self._follow("message/stream", params))

    async def get_task(self, task_id: str, *, history_length: int | None = None) -> Task:
        """The current state of a task (`tasks/get`), with at most `history_length` messages."""
        params = TaskQueryParams(id=task_id, history_length=history_length)
        return await self._call("tasks/get", params, _TASK)

    async def cancel_task(self, task_id: str) -> Task:
        """Cancel a task that has not finished (`tasks/cancel`)."""
        return await self._call("tasks/cancel", TaskIdParams(id=task_id), _TASK)

    def resubscribe(self, task_id: str, *, last_event_id: int | None = None) -> EventStream:
        """Follow a running task again (`tasks/resubscribe`): the task, then each change.

        To resume a stream that broke off, pass its `last_event_id`: the server then sends
        the events that came after that one (each exactly once) instead of the task.
        """
        params = TaskIdParams(id=task_id)
        return EventStream(self._follow("tasks/resubscribe", params, last_event_id))

    async def get_extended_card(self) -> AgentCard:
        """The card for authenticated clients (`agent/getAuthenticatedExtendedCard`)."""
        return await self._call("agent/getAuthenticatedExtendedCard", None, _CARD)

    async def aclose(self) -> None:
        """Close the HTTP client, unless it was given to us."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _endpoint(self) -> str:
        return jsonrpc_url(await self.get_card())

    async def _call(self, method: str, params: A2AModel | None, result: TypeAdapter[T]) -> T:
        return await self._transport.call(await self._endpoint(), method, params, result)

    async def _follow(
        self, method: str, params: A2AModel, last_event_id: int | None = None
    ) -> IdentifiedEvents:
        url = await self._endpoint()
        events = self._transport.stream(
            url, method, params, _STREAM_EVENT, last_event_id=last_event_id
        )
        async with aclosing(events):
            async for item in events:
                yield item

    def __repr__(self) -> str:
        return f"Client(url={self.url!r})"
