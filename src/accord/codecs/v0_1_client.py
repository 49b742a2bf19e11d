"""A2A 0.1 JSON-RPC as a client calls it: canonical requests out, 0.1 results in."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from accord.codecs.base import ClientCall, ClientCodec, ignored
from accord.codecs.v0_1_json import (
    event_from,
    message_json,
    push_config_from,
    push_config_json,
    task_from,
    webhook_json,
)
from accord.codecs.v0_3 import error_from_object
from accord.codecs.versions import ProtocolVersion
from accord.errors import A2AClientError
from accord.types import (
    A2AModel,
    GetTaskPushNotificationConfigParams,
    MessageSendConfiguration,
    MessageSendParams,
    StreamEvent,
    new_id,
)

# 0.1 events do not name their task's session, so a stream's events are decoded knowing it
# (`in_session`); the 0.1 transport learns it before the stream starts.


def send_fields(params: MessageSendParams) -> dict[str, Any]:
    """The 0.1 TaskSendParams of a canonical send: the message's task id is the `id` (a new
    task's, chosen here, when it names none) and its context id the `sessionId`.

    A2AClientError for a non-blocking send: `tasks/send` always answers with the task done or
    waiting for input (`tasks/sendSubscribe` follows it instead).
    """
    configuration = params.configuration or MessageSendConfiguration()
    if configuration.blocking is False:
        raise A2AClientError(
            "A2A 0.1 has no non-blocking send: tasks/send answers when the task is done or"
            " waits for input; stream the message to follow the task instead"
        )
    message = params.message
    push = configuration.push_notification_config
    fields = {
        "id": message.task_id or new_id(),
        "sessionId": message.context_id,
        "message": message_json(message.to_wire()),
        "acceptedOutputModes": configuration.accepted_output_modes,
        "historyLength": configuration.history_length,
        "pushNotification": webhook_json(push) if push else None,
        "metadata": params.metadata,
    }
    return {name: value for name, value in fields.items() if value is not None}


def _push_config_id(params: GetTaskPushNotificationConfigParams) -> dict[str, Any]:
    """`tasks/pushNotification/get` names the task alone: its one webhook has the task's id."""
    wanted = params.push_notification_config_id
    if wanted not in (None, params.id):
        raise A2AClientError(
            f"A2A 0.1 has one webhook per task, whose id is the task's ({params.id!r}),"
            f" not {wanted!r}"
        )
    return {"id": params.id}


def in_session(call: ClientCall[Any, StreamEvent], context_id: str) -> ClientCall[Any, StreamEvent]:
    """A streaming call whose events are decoded as those of a task in `context_id`."""
    return replace(call, decode=partial(event_from, context_id=context_id))


def _not_in_0_1(name: str, what: str) -> ClientCall[Any, Any]:
    """An operation 0.1 does not have: calling it raises A2AClientError before sending."""

    def refuse(params: Any) -> None:
        raise A2AClientError(
            f"{what} is not part of A2A 0.1, the version this agent's interface speaks"
        )

    return ClientCall(name, refuse, ignored)


CLIENT: ClientCodec[None] = ClientCodec(
    version=ProtocolVersion.V0_1,
    send=ClientCall("tasks/send", send_fields, task_from),
    stream=ClientCall("tasks/sendSubscribe", send_fields, partial(event_from, context_id="")),
    get_task=ClientCall("tasks/get", A2AModel.to_wire, task_from),
    cancel_task=ClientCall("tasks/cancel", A2AModel.to_wire, task_from),
    resubscribe=ClientCall(
        "tasks/resubscribe", A2AModel.to_wire, partial(event_from, context_id="")
    ),
    set_push_config=ClientCall("tasks/pushNotification/set", push_config_json, push_config_from),
    get_push_config=ClientCall("tasks/pushNotification/get", _push_config_id, push_config_from),
    list_push_configs=_not_in_0_1(
        "tasks/pushNotificationConfig/list", "listing a task's push configs"
    ),
    delete_push_config=_not_in_0_1(
        "tasks/pushNotificationConfig/delete", "deleting a task's push config"
    ),
    get_extended_card=_not_in_0_1(
        "agent/getAuthenticatedExtendedCard", "the authenticated extended card"
    ),
    error=error_from_object,
)
"""A2A 0.1 JSON-RPC as a client calls it. Stream events decode with an empty context id until
the transport puts the call `in_session` (JsonRpcV01Transport does, for every stream)."""
