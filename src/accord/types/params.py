"""Parameters of the protocol's operations."""

from __future__ import annotations

from pydantic import Field

from accord.types._base import A2AModel, Metadata
from accord.types.messages import Message
from accord.types.push import PushNotificationConfig


class MessageSendConfiguration(A2AModel):
    """Options of a send or stream request."""

    accepted_output_modes: list[str] | None = None
    blocking: bool | None = None
    history_length: int | None = Field(default=None, ge=0)
    push_notification_config: PushNotificationConfig | None = None


class MessageSendParams(A2AModel):
    """Parameters of `message/send` and `message/stream`."""

    message: Message
    configuration: MessageSendConfiguration | None = None
    metadata: Metadata | None = None


class TaskIdParams(A2AModel):
    """Names one task."""

    id: str
    metadata: Metadata | None = None


class TaskQueryParams(TaskIdParams):
    """Names one task and how much of its history to return."""

    history_length: int | None = Field(default=None, ge=0)


class GetTaskPushNotificationConfigParams(TaskIdParams):
    """Names one push config of a task (the first one when no id is given)."""

    push_notification_config_id: str | None = None


class ListTaskPushNotificationConfigParams(TaskIdParams):
    """Names the task whose push configs to list."""


class DeleteTaskPushNotificationConfigParams(TaskIdParams):
    """Names one push config of a task to delete."""

    push_notification_config_id: str
