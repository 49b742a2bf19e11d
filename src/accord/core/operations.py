"""Operations: the protocol's operations on canonical objects, as the codecs name them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from accord.core.call_context import CallContext
from accord.core.push import TASK_SNAPSHOTS
from accord.core.query import ListTasksParams, TaskPage
from accord.core.records import EventRecord
from accord.types import (
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    Message,
    MessageSendParams,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
)


class Operations(Protocol):
    """Every A2A operation once, whatever version or binding asked for it.

    Codecs pick these by name (a `Method` of theirs) and never see what implements them;
    `A2AService` does. `push_format` names the payload format of the webhooks a version
    registers; `create_if_missing` lets a message start a task under the id it names (A2A
    0.1, whose clients choose task ids).
    """

    async def send_message(
        self,
        params: MessageSendParams,
        call: CallContext,
        *,
        create_if_missing: bool = False,
        push_format: str = TASK_SNAPSHOTS,
    ) -> Task | Message: ...

    async def stream_message(
        self,
        params: MessageSendParams,
        call: CallContext,
        *,
        create_if_missing: bool = False,
        push_format: str = TASK_SNAPSHOTS,
    ) -> AsyncIterator[EventRecord]: ...

    async def get_task(self, params: TaskQueryParams, call: CallContext) -> Task: ...

    async def cancel_task(self, params: TaskIdParams, call: CallContext) -> Task: ...

    async def resubscribe(
        self, params: TaskIdParams, call: CallContext
    ) -> AsyncIterator[EventRecord]: ...

    async def list_tasks(self, params: ListTasksParams, call: CallContext) -> TaskPage: ...

    async def set_push_config(
        self,
        params: TaskPushNotificationConfig,
        call: CallContext,
        *,
        push_format: str = TASK_SNAPSHOTS,
    ) -> TaskPushNotificationConfig: ...

    async def get_push_config(
        self, params: GetTaskPushNotificationConfigParams, call: CallContext
    ) -> TaskPushNotificationConfig: ...

    async def list_push_configs(
        self, params: ListTaskPushNotificationConfigParams, call: CallContext
    ) -> list[TaskPushNotificationConfig]: ...

    async def delete_push_config(
        self, params: DeleteTaskPushNotificationConfigParams, call: CallContext
    ) -> None: ...

    async def get_extended_card(self, params: None, call: CallContext) -> AgentCard: ...
