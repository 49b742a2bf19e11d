"""JsonRpcV01Transport: A2A 0.1 over JSON-RPC, knowing the session each stream's events are in."""

from __future__ import annotations

from contextlib import aclosing
from typing import TypeVar, cast

from accord.client.transports.base import IdentifiedEvents
from accord.client.transports.jsonrpc import JsonRpcTransport
from accord.codecs import v0_1_client
from accord.codecs.base import ClientCall
from accord.errors import TaskNotFound
from accord.types import (
    MessageSendParams,
    StreamEvent,
    TaskIdParams,
    TaskQueryParams,
    new_id,
)

P = TypeVar("P")


class JsonRpcV01Transport(JsonRpcTransport):
    """JSON-RPC calls in A2A 0.1's shapes (`codec` is `accord.codecs.v0_1_client.CLIENT`).

    Every request carries `A2A-Version: 0.1`: a 0.1 agent ignores it, and an agent that also
    speaks 0.3 needs it to answer `tasks/get`, `tasks/cancel` and `tasks/resubscribe`, which
    both versions have, in 0.1's shapes. 0.1 stream events do not name the task's session
    (its context id), so a stream learns it first: from the message sent, else from the task
    it continues (`tasks/get`) or follows; a new task gets a new session chosen here.
    """

    async def stream(
        self, call: ClientCall[P, StreamEvent], params: P, last_event_id: int | None = None
    ) -> IdentifiedEvents:
        session = await self._session(params)
        if isinstance(params, MessageSendParams) and params.message.context_id is None:
            message = params.message.model_copy(update={"context_id": session})
            params = cast(P, params.model_copy(update={"message": message}))
        events = super().stream(v0_1_client.in_session(call, session), params, last_event_id)
        async with aclosing(events):
            async for item in events:
                yield item

    async def _session(self, params: object) -> str:
        """The session (context id) of the task a stream with `params` follows."""
        if isinstance(params, MessageSendParams):
            message = params.message
            if message.context_id is not None:
                return message.context_id
            if message.task_id is None:
                return new_id()
            try:
                return await self._session_of_task(message.task_id)
            except TaskNotFound:  # 0.1 starts a task under the id its client chose
                return new_id()
        if isinstance(params, TaskIdParams):
            return await self._session_of_task(params.id)
        raise TypeError(f"no A2A 0.1 stream takes {type(params).__name__}")

    async def _session_of_task(self, task_id: str) -> str:
        query = TaskQueryParams(id=task_id, history_length=0)
        return (await self.call(self.codec.get_task, query)).context_id
