"""GatewayExecutor: each call relayed to the upstream agent, its events made the gateway's task."""

from __future__ import annotations

import asyncio
from contextlib import suppress

from accord.agents import AgentExecutor, EventSink, NamedTask, RequestContext
from accord.core.call_context import CallContext
from accord.errors import A2AError, InternalError, InvalidAgentResponse
from accord.gateway.upstream import Upstream, UpstreamCall
from accord.types import MessageSendParams, StreamEvent, Task, TaskStatus

DRAIN_TIMEOUT = 1.0
"""How long the end of an upstream stream is waited for once the task settled (seconds)."""
POLL_INTERVAL = 0.5
"""How often a task of an upstream that cannot stream is asked for until it settles."""


def settled(context: RequestContext) -> bool:
    """Whether the gateway's task ended, or waits for the caller."""
    task = context.task
    return task is not None and (task.status.state.is_terminal or task.status.state.is_interrupted)


class GatewayExecutor(AgentExecutor):
    """Relays each message to `upstream` and what it answers into the gateway's task, as it
    is: the task keeps the upstream's task and context ids (`name_task`), and gets exactly the
    states, messages and artifacts the upstream sent. A stream that breaks off is followed
    again from the upstream's task; an upstream that stops answering fails the task saying
    so. Restartable: a gateway that took a task over follows the upstream's task again."""

    restartable = True

    def __init__(self, upstream: Upstream, *, poll_interval: float = POLL_INTERVAL) -> None:
        self.upstream = upstream
        self.poll_interval = poll_interval

    async def name_task(self, params: MessageSendParams, call: CallContext | None) -> NamedTask:
        """The message goes to the upstream now: the task is named after the upstream's. A
        task id the message names here is one its client chose for a new task (the first
        versions of the protocol let clients choose), which the upstream would not know: the
        upstream names the task."""
        if params.message.task_id is not None:
            message = params.message.model_copy(update={"task_id": None})
            params = params.model_copy(update={"message": message})
        opened = await self.upstream.open(params, call)
        echo_activated(opened, call)
        return NamedTask(opened.task_id, opened.context_id, opened)

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        opened = context.prepared
        if not isinstance(opened, UpstreamCall):
            if context.call is None and context.task is not None:  # taken over after a restart
                await self._catch_up(context, events)
                await self._until_settled(context, events)
                return
            params = MessageSendParams(
                message=context.message, configuration=context.configuration,
                metadata=context.metadata or None,
            )  # fmt: skip
            opened = await self.upstream.open(params, context.call)
            echo_activated(opened, context.call)
        async with opened:
            try:
                await self._relay(opened, context, events)
            except InternalError:  # the stream broke off: followed again below, or failed
                if context.task is None:
                    raise
        if context.task is not None:  # not a plain reply
            await self._until_settled(context, events)

    async def cancel(self, context: RequestContext, events: EventSink) -> None:
        """The upstream cancels its task (its refusal is the caller's answer); the gateway's
        task ends as the upstream's did."""
        task = await self.upstream.cancel_task(context.task_id)
        await self._send(context, events, task)

    async def _relay(self, call: UpstreamCall, context: RequestContext, events: EventSink) -> None:
        ended = await self._relay_event(call.first, context, events)
        if call.rest is None:  # a plain send's answer: nothing follows
            return
        rest = call.rest_events(self.upstream.url)
        if not ended:
            async for event in rest:
                if await self._relay_event(event, context, events):
                    break
        # Read to the stream's end, which follows at once: its connection is then kept for
        # the next call rather than closed (a stream that stays open is let go of).
        with suppress(TimeoutError, InternalError):
            async with asyncio.timeout(DRAIN_TIMEOUT):
                async for _ in rest:
                    pass

    async def _relay_event(
        self, event: StreamEvent, context: RequestContext, events: EventSink
    ) -> bool:
        """Relay one event of the upstream's; whether the gateway's task settled with it."""
        ours = context.task
        if ours is not None and not ours.status.state.is_terminal and repeats(event, ours):
            return False  # a follow-up's stream may open with the task as it waited for input
        await self._send(context, events, event)
        return settled(context)

    async def _send(self, context: RequestContext, events: EventSink, event: StreamEvent) -> None:
        """Relay one upstream event, unless the gateway's task ended meanwhile (a cancel
        relayed the upstream's end while its stream said the same)."""
        ours = context.task
        if ours is not None and (ours.status.state.is_terminal or repeats(event, ours)):
            return
        try:
            await events.send(event)
        except InvalidAgentResponse:
            if context.task is not None and context.task.status.state.is_terminal:
                return
            raise

    async def _catch_up(self, context: RequestContext, events: EventSink) -> None:
        """The upstream's task as it stands now, for a task this gateway lost sight of."""
        task = await self.upstream.get_task(context.task_id)
        await self._send(context, events, task)

    async def _until_settled(self, context: RequestContext, events: EventSink) -> None:
        """Follow the upstream's task until it ends or waits for the caller: streamed again
        where the upstream streams, else asked for every `poll_interval` seconds."""
        while not settled(context):
            try:
                again = await self.upstream.follow(context.task_id)
            except A2AError:  # unreachable, or no stream of a task that ended meanwhile
                again = None  # asked for below, which says which
            if again is not None:
                async with again:
                    with suppress(InternalError):  # broke off too: the task is asked for
                        await self._relay(again, context, events)
                if settled(context):
                    return
            try:
                task = await self.upstream.get_task(context.task_id)
            except InternalError as exc:
                state = context.task.status.state.value if context.task else "unknown"
                raise InternalError(
                    f"the agent at {self.upstream.url} stopped answering while the task was"
                    f" {state}: {exc.message}"
                ) from None
            ours = context.task.status.state if context.task is not None else None
            if task.status.state is not ours:
                await self._send(context, events, task)
            if not settled(context):
                await asyncio.sleep(self.poll_interval)


def echo_activated(opened: UpstreamCall, call: CallContext | None) -> None:
    """The caller's reply says the extensions the upstream says it activated (the gateway
    implements none itself). A stream continuing a task answered its caller before that."""
    if call is not None:
        call.reply_extensions = opened.activated


def repeats(event: StreamEvent, ours: Task) -> bool:
    """Whether `event` is a snapshot of the task as the gateway has it already (a stream
    followed again starts with one)."""
    if not isinstance(event, Task):
        return False
    theirs, mine = event.status, ours.status
    return (
        theirs.state is mine.state
        and _message_id(theirs) == _message_id(mine)
        and (event.artifacts or []) == (ours.artifacts or [])
    )


def _message_id(status: TaskStatus) -> str | None:
    return status.message.message_id if status.message is not None else None
