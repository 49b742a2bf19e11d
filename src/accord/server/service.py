"""A2AService: the protocol's operations on canonical objects, the same for every binding."""

from __future__ import annotations

from collections.abc import AsyncIterator

from accord.agents.agent import Agent
from accord.errors import (
    AuthenticatedExtendedCardNotConfigured,
    ContentTypeNotSupported,
    PushNotificationNotSupported,
    UnsupportedOperation,
)
from accord.runtime import EventRecord, TaskRuntime
from accord.server.call_context import CallContext
from accord.server.media_types import any_accepted
from accord.types import (
    AgentCard,
    Message,
    MessageSendParams,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
)


class A2AService:
    """Every A2A operation, once: validation, agent capabilities, history trimming."""

    def __init__(self, agent: Agent, runtime: TaskRuntime) -> None:
        self.agent = agent
        self.runtime = runtime
        self._template = agent.card("")

    async def send_message(self, params: MessageSendParams, call: CallContext) -> Task | Message:
        """Run the agent on a message; wait for the outcome unless `blocking` is false."""
        self._check_output_modes(params)
        execution = await self.runtime.start(params)
        blocking = params.configuration is None or params.configuration.blocking is not False
        try:
            async for record in execution:
                if record.error is not None:
                    raise record.error
                if isinstance(record.event, Message) and record.seq == 0:
                    return record.event
                if record.final or not blocking:
                    break
        finally:
            execution.close()
        task = await self.runtime.get_task(execution.task_id)
        return with_history(task, _history_length(params))

    async def stream_message(
        self, params: MessageSendParams, call: CallContext
    ) -> AsyncIterator[EventRecord]:
        """Run the agent on a message and follow it: the task (or reply), then each change."""
        self._require_streaming()
        self._check_output_modes(params)
        return await self.runtime.start(params)

    async def get_task(self, params: TaskQueryParams, call: CallContext) -> Task:
        """A task's current state."""
        return with_history(await self.runtime.get_task(params.id), params.history_length)

    async def cancel_task(self, params: TaskIdParams, call: CallContext) -> Task:
        """Cancel a task that has not finished."""
        return await self.runtime.cancel(params.id)

    async def resubscribe(
        self, params: TaskIdParams, call: CallContext
    ) -> AsyncIterator[EventRecord]:
        """Follow a running task again: its current state (or, for a reconnecting stream,
        the events it missed), then each change."""
        self._require_streaming()
        return await _primed(self.runtime.watch(params.id, call.last_event_id))

    async def push_config(
        self, params: TaskIdParams | TaskPushNotificationConfig, call: CallContext
    ) -> None:
        """Any push notification config operation (this server sends no push notifications)."""
        raise PushNotificationNotSupported("this agent does not send push notifications")

    async def get_extended_card(self, params: None, call: CallContext) -> AgentCard:
        """The card shown to authenticated clients."""
        card = self.agent.extended_card
        if card is None:
            raise AuthenticatedExtendedCardNotConfigured(
                "this agent has no authenticated extended card"
            )
        return card.model_copy(update={"url": call.base_url})

    def _require_streaming(self) -> None:
        if not self._template.capabilities.streaming:
            raise UnsupportedOperation("this agent does not support streaming")

    def _check_output_modes(self, params: MessageSendParams) -> None:
        accepted = params.configuration and params.configuration.accepted_output_modes
        if accepted and not any_accepted(self._template.default_output_modes, accepted):
            raise ContentTypeNotSupported(
                f"the agent produces {', '.join(self._template.default_output_modes)}; "
                f"none of the accepted output modes ({', '.join(accepted)}) match"
            )


def with_history(task: Task, history_length: int | None) -> Task:
    """`task` with at most `history_length` recent messages (0: no history; None: all)."""
    if history_length is None or task.history is None:
        return task
    history = task.history[-history_length:] if history_length else None
    return task.model_copy(update={"history": history})


def _history_length(params: MessageSendParams) -> int | None:
    return params.configuration.history_length if params.configuration else None


async def _primed(records: AsyncIterator[EventRecord]) -> AsyncIterator[EventRecord]:
    """Fetch the first record now, so errors surface before a stream response starts."""
    first = await anext(records)

    async def chained() -> AsyncIterator[EventRecord]:
        yield first
        async for record in records:
            yield record

    return chained()
