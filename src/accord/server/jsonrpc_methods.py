"""The JSON-RPC methods of A2A 0.2/0.3: name, parameter model, service operation, streaming."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from accord.server.call_context import CallContext
from accord.server.service import A2AService
from accord.types import (
    A2AModel,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    MessageSendParams,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
)


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """How to decode a method's params and which service operation serves it."""

    params: type[A2AModel] | None
    operation: Callable[[A2AService], Callable[[Any, CallContext], Awaitable[Any]]]
    streaming: bool = False


METHODS: dict[str, MethodSpec] = {
    "message/send": MethodSpec(MessageSendParams, lambda s: s.send_message),
    "message/stream": MethodSpec(MessageSendParams, lambda s: s.stream_message, streaming=True),
    "tasks/get": MethodSpec(TaskQueryParams, lambda s: s.get_task),
    "tasks/cancel": MethodSpec(TaskIdParams, lambda s: s.cancel_task),
    "tasks/resubscribe": MethodSpec(TaskIdParams, lambda s: s.resubscribe, streaming=True),
    "tasks/pushNotificationConfig/set": MethodSpec(
        TaskPushNotificationConfig, lambda s: s.push_config
    ),
    "tasks/pushNotificationConfig/get": MethodSpec(
        GetTaskPushNotificationConfigParams, lambda s: s.push_config
    ),
    "tasks/pushNotificationConfig/list": MethodSpec(
        ListTaskPushNotificationConfigParams, lambda s: s.push_config
    ),
    "tasks/pushNotificationConfig/delete": MethodSpec(
        DeleteTaskPushNotificationConfigParams, lambda s: s.push_config
    ),
    "agent/getAuthenticatedExtendedCard": MethodSpec(None, lambda s: s.get_extended_card),
}
