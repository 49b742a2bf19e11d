"""Building what the client sends: the user message and the parameters of a send."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from accord.types import (
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Metadata,
    Part,
    PushNotificationConfig,
    Role,
    TextPart,
    new_id,
)


def user_message(
    content: str | Message,
    *,
    parts: Sequence[Part] = (),
    task_id: str | None = None,
    context_id: str | None = None,
    reference_task_ids: Sequence[str] | None = None,
) -> Message:
    """`content` as a message: a given Message as is, or text as a new user message.

    `parts` are added after the message's own parts; the ids, when given, replace the message's.
    """
    if isinstance(content, Message):
        message = content
        if parts:
            message = message.model_copy(update={"parts": [*message.parts, *parts]})
    else:
        text_parts: list[Part] = [TextPart(text=content)] if content or not parts else []
        message = Message(message_id=new_id(), role=Role.USER, parts=[*text_parts, *parts])
    updates: dict[str, Any] = {
        "task_id": task_id,
        "context_id": context_id,
        "reference_task_ids": list(reference_task_ids) if reference_task_ids else None,
    }
    updates = {name: value for name, value in updates.items() if value is not None}
    return message.model_copy(update=updates) if updates else message


def send_params(
    message: Message,
    *,
    blocking: bool | None = None,
    history_length: int | None = None,
    accepted_output_modes: Sequence[str] | None = None,
    metadata: Metadata | None = None,
    push: PushNotificationConfig | None = None,
) -> MessageSendParams:
    """The params of `message/send` or `message/stream`; configuration only when any is set."""
    modes = list(accepted_output_modes) if accepted_output_modes else None
    configuration = None
    if not (blocking is None and history_length is None and modes is None and push is None):
        configuration = MessageSendConfiguration(
            blocking=blocking,
            history_length=history_length,
            accepted_output_modes=modes,
            push_notification_config=push,
        )
    return MessageSendParams(message=message, configuration=configuration, metadata=metadata)
