"""Validators for the protocol objects that are not single models, built once for everyone."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from accord.types.card import AgentCard
from accord.types.push import TaskPushNotificationConfig
from accord.types.tasks import SendResult, StreamEvent, Task

TASK = TypeAdapter(Task)
AGENT_CARD = TypeAdapter(AgentCard)
SEND_RESULT: TypeAdapter[Any] = TypeAdapter(SendResult)
"""A Task or a Message, told apart by `kind`."""
STREAM_EVENT: TypeAdapter[Any] = TypeAdapter(StreamEvent)
"""Any event of a stream, told apart by `kind`."""
PUSH_CONFIG = TypeAdapter(TaskPushNotificationConfig)
PUSH_CONFIGS = TypeAdapter(list[TaskPushNotificationConfig])
