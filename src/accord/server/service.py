"""A2AService: the protocol's operations on canonical objects, the same for every binding."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

from accord.agents.agent import Agent
from accord.codecs.base import field_error
from accord.core.call_context import CallContext
from accord.core.media_types import any_accepted
from accord.core.push import TASK_SNAPSHOTS, PushTarget
from accord.core.query import ListTasksParams, TaskPage
from accord.core.records import EventRecord, close_stream
from accord.errors import (
    AuthenticatedExtendedCardNotConfigured,
    ContentTypeNotSupported,
    PushNotificationNotSupported,
    TaskNotFound,
    UnsupportedOperation,
)
from accord.runtime import Execution, TaskRuntime
from accord.server.interfaces import ServedInterfaces
from accord.types import (
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    Message,
    MessageSendParams,
    PushNotificationConfig,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    adapters,
)


class A2AService:
    """Every A2A operation, once (the `Operations` the codecs name): validation, agent
    capabilities, history trimming, and tenant isolation: each operation on a task reads it
    as its caller's (`call.principal.owner`), so another caller's task is TaskNotFound and
    never listed."""

    def __init__(
        self, agent: Agent, runtime: TaskRuntime, interfaces: ServedInterfaces | None = None
    ) -> None:
        self.agent = agent
        self.runtime = runtime
        self.interfaces = interfaces if interfaces is not None else ServedInterfaces()
        self._template = agent.card("")
        self._template_revision = agent.card_revision

    @property
    def _card(self) -> AgentCard:
        """The agent's card as it is now (a gateway's changes with its upstreams)."""
        if self._template_revision != self.agent.card_revision:
            self._template = self.agent.card("")
            self._template_revision = self.agent.card_revision
        return self._template

    async def send_message(
        self,
        params: MessageSendParams,
        call: CallContext,
        *,
        create_if_missing: bool = False,
        push_format: str = TASK_SNAPSHOTS,
    ) -> Task | Message:
        """Run the agent on a message; wait for the outcome unless `blocking` is false.

        With `create_if_missing`, a message naming a task that does not exist starts it under
        that id (A2A 0.1, whose clients choose task ids); otherwise that is TaskNotFound. A push
        config given with the message is sent in the payload format `push_format` (the name of
        a PushFormat, chosen by the codec).
        """
        execution = await self._start(params, call, create_if_missing, push_format)
        blocking = params.configuration is None or params.configuration.blocking is not False
        if blocking:
            execution.skip_to_final()
        try:
            async for record in execution:
                if record.error is not None:
                    raise record.error
                if isinstance(record.event, Message) and record.seq == 0:
                    return await _shaped(record.event, params, call)
                if record.final or not blocking:
                    break
        finally:
            execution.close()
        task = execution.task or await self.runtime.get_task(execution.task_id, _owner(call))
        shown = with_history(task, _history_length(params))
        if shown is task and execution.ended_json is not None:
            call.result_json = (task, execution.ended_json)
        return await _shaped(shown, params, call)

    async def stream_message(
        self,
        params: MessageSendParams,
        call: CallContext,
        *,
        create_if_missing: bool = False,
        push_format: str = TASK_SNAPSHOTS,
    ) -> AsyncIterator[EventRecord]:
        """Run the agent on a message and follow it: the task (or reply), then each change.

        `create_if_missing` and `push_format` as for `send_message`.
        """
        self._require_streaming()
        execution = await self._start(params, call, create_if_missing, push_format)
        return _shaped_events(execution, params, call)

    async def get_task(self, params: TaskQueryParams, call: CallContext) -> Task:
        """A task's current state."""
        task = await self.runtime.get_task(params.id, _owner(call))
        return with_history(task, params.history_length)

    async def cancel_task(self, params: TaskIdParams, call: CallContext) -> Task:
        """Cancel a task that has not finished."""
        return await self.runtime.cancel(params.id, _owner(call), call=call)

    async def resubscribe(
        self, params: TaskIdParams, call: CallContext
    ) -> AsyncIterator[EventRecord]:
        """Follow a running task again: its current state (or, for a reconnecting stream,
        the events it missed), then each change."""
        self._require_streaming()
        records = await _primed(self.runtime.watch(params.id, call.last_event_id, _owner(call)))
        return _shaped_events(records, params, call)

    async def list_tasks(self, params: ListTasksParams, call: CallContext) -> TaskPage:
        """Tasks matching a query, most recently updated first, one page at a time."""
        query = replace(params.query, owner=_owner(call))
        page = await self.runtime.store.list_tasks(query)
        return replace(page, tasks=[_listed(task, params) for task in page.tasks])

    async def set_push_config(
        self,
        params: TaskPushNotificationConfig,
        call: CallContext,
        *,
        push_format: str = TASK_SNAPSHOTS,
    ) -> TaskPushNotificationConfig:
        """Add (or replace, by id) a webhook of a task; a config without id gets one. The
        webhook is sent updates in the payload format `push_format` (chosen by the codec)."""
        await self._push_task(params.task_id, call)
        await self._check_push_config(params.push_notification_config)
        target = await self.runtime.store.set_push_config(
            params.task_id, PushTarget(params.push_notification_config, push_format)
        )
        self.runtime.push_configs_changed(params.task_id)
        return _bound(params.task_id, target)

    async def get_push_config(
        self, params: GetTaskPushNotificationConfigParams, call: CallContext
    ) -> TaskPushNotificationConfig:
        """One webhook of a task (without a config id: the first one set)."""
        owner = await self._push_task(params.id, call)
        config_id = params.push_notification_config_id
        if config_id is None:
            targets = await self.runtime.store.list_push_configs(params.id, owner)
            target = next(iter(targets), None)
        else:
            target = await self.runtime.store.get_push_config(params.id, config_id, owner)
        if target is None:
            which = "" if config_id is None else f" {config_id!r}"
            raise TaskNotFound(f"task {params.id} has no push notification config{which}")
        return _bound(params.id, target)

    async def list_push_configs(
        self, params: ListTaskPushNotificationConfigParams, call: CallContext
    ) -> list[TaskPushNotificationConfig]:
        """Every webhook of a task, in the order they were first set."""
        owner = await self._push_task(params.id, call)
        targets = await self.runtime.store.list_push_configs(params.id, owner)
        return [_bound(params.id, target) for target in targets]

    async def delete_push_config(
        self, params: DeleteTaskPushNotificationConfigParams, call: CallContext
    ) -> None:
        """Remove a webhook of a task; removing one that is not there is not an error."""
        owner = await self._push_task(params.id, call)
        config_id = params.push_notification_config_id
        await self.runtime.store.delete_push_config(params.id, config_id, owner)
        self.runtime.push_configs_changed(params.id)

    async def get_extended_card(self, params: None, call: CallContext) -> AgentCard:
        """The card shown to authenticated clients, listing the interfaces the server answers."""
        card = self.agent.extended_card
        if card is None:
            raise AuthenticatedExtendedCardNotConfigured(
                "this agent has no authenticated extended card"
            )
        return self.interfaces.card(card, call.base_url)

    async def _start(
        self,
        params: MessageSendParams,
        call: CallContext,
        create_if_missing: bool,
        push_format: str,
    ) -> Execution:
        if not params.message.parts:
            raise field_error("message.parts", "at least one part is required")
        for extension in call.extensions:
            await extension.shape_request(params, call)
        self._check_output_modes(params)
        push = params.configuration.push_notification_config if params.configuration else None
        if push:
            self._require_push()
            await self._check_push_config(push)
        execution = await self.runtime.start(
            params, call=call, create_if_missing=create_if_missing, push_format=push_format
        )
        if push:
            # Saved before the agent runs (start only schedules it), so its updates find the
            # webhook — with a store that answers without yielding to the event loop, at least.
            await self.runtime.store.set_push_config(
                execution.task_id, PushTarget(push, push_format)
            )
            self.runtime.push_configs_changed(execution.task_id)
        return execution

    async def _push_task(self, task_id: str, call: CallContext) -> str:
        """Push config operations need the capability and an existing task of the caller's;
        the caller's owner for the store's queries."""
        self._require_push()
        owner = _owner(call)
        await self.runtime.get_task(task_id, owner)
        return owner

    async def _check_push_config(self, config: PushNotificationConfig) -> None:
        """InvalidParams for a webhook that may not be sent to (see WebhookGuard)."""
        sender = self.runtime.push
        if sender is not None:
            await sender.guard.check_config(config)

    def _require_push(self) -> None:
        if not self._card.capabilities.push_notifications:
            raise PushNotificationNotSupported("this agent does not send push notifications")

    def _require_streaming(self) -> None:
        if not self._card.capabilities.streaming:
            raise UnsupportedOperation("this agent does not support streaming")

    def _check_output_modes(self, params: MessageSendParams) -> None:
        accepted = params.configuration and params.configuration.accepted_output_modes
        if accepted and not any_accepted(self._card.default_output_modes, accepted):
            raise ContentTypeNotSupported(
                f"the agent produces {', '.join(self._card.default_output_modes)}; "
                f"none of the accepted output modes ({', '.join(accepted)}) match"
            )


def _owner(call: CallContext) -> str:
    """What the caller's tasks are stored under."""
    return call.principal.owner


def with_history(task: Task, history_length: int | None) -> Task:
    """`task` with at most `history_length` recent messages (0: no history; None: all)."""
    if history_length is None or task.history is None:
        return task
    history = task.history[-history_length:] if history_length else None
    return task.model_copy(update={"history": history})


def _listed(task: Task, params: ListTasksParams) -> Task:
    """A task as a listing shows it: trimmed history, artifacts only when asked for."""
    task = with_history(task, params.history_length)
    artifacts = (task.artifacts or []) if params.include_artifacts else None
    return task.model_copy(update={"artifacts": artifacts})


def _bound(task_id: str, target: PushTarget) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(task_id=task_id, push_notification_config=target.config)


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


async def _shaped(
    result: Task | Message, params: MessageSendParams, call: CallContext
) -> Task | Message:
    """`result` after each activated extension looked at it."""
    for extension in call.extensions:
        result = await extension.shape_result(result, params, call)
    return result


def _shaped_events(
    records: AsyncIterator[EventRecord], params: MessageSendParams | TaskIdParams, call: CallContext
) -> AsyncIterator[EventRecord]:
    """The records of a stream as its request's activated extensions shape their events."""
    return _ShapedRecords(records, params, call) if call.extensions else records


class _ShapedRecords(AsyncIterator[EventRecord]):
    """A stream's records, each event passed through `shape_event` of every extension the
    request activated. A changed event gets a record of its own (same sequence number, new
    payload): the published record is shared with every other subscriber of the task."""

    def __init__(
        self,
        records: AsyncIterator[EventRecord],
        params: MessageSendParams | TaskIdParams,
        call: CallContext,
    ) -> None:
        self._records = records
        self._params = params
        self._call = call

    async def __anext__(self) -> EventRecord:
        record = await anext(self._records)
        if record.event is None:
            return record
        event = record.event
        if isinstance(event, Task):  # a snapshot is the live task, which moves on: as recorded
            event = adapters.TASK.validate_json(record.payload)
        shaped = event
        for extension in self._call.extensions:
            shaped = await extension.shape_event(shaped, self._params, self._call)
        if shaped is event:
            return record
        return replace(record, event=shaped, payload=shaped.to_json(), encodings={})

    async def aclose(self) -> None:
        await close_stream(self._records)
