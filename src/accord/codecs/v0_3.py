"""The A2A 0.2/0.3 JSON-RPC codec: slash method names; its wire shapes are the canonical ones."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic_core import to_json

from accord.codecs.base import (
    ClientCall,
    ClientCodec,
    JsonRpcCodec,
    Method,
    field_error,
    ignored,
    no_params,
    nothing,
    params_object,
    validate,
    validated,
)
from accord.codecs.interfaces import CARD_PROTOCOL_VERSION
from accord.codecs.protojson import PART
from accord.codecs.versions import ProtocolVersion
from accord.core.records import EventRecord
from accord.errors import A2AError, ExtensionSupportRequired, InvalidRequest
from accord.types import (
    A2AModel,
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    JSONRPCError,
    ListTaskPushNotificationConfigParams,
    MessageSendParams,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    adapters,
)


def _params(model: type[A2AModel]) -> Callable[[Any], A2AModel]:
    return lambda params: validate(model, params_object(params))


_PART_CONTENT = ("text", "file", "data", "raw", "url")
"""What a part without `kind` may hold: a 0.3 part's content, or a 1.0 part's (raw, url)."""


def _send_params(params: Any) -> MessageSendParams:
    """MessageSendParams, whose message's parts may leave out `kind` when their fields say
    what they are: some clients send parts in 1.0's shape to the 0.3 methods."""
    fields = params_object(params)
    message = fields.get("message")
    if isinstance(message, dict):
        parts = message.get("parts")
        if isinstance(parts, list) and any(_kindless(part) for part in parts):
            parts = [
                _with_kind(part, f"message.parts.{index}") if _kindless(part) else part
                for index, part in enumerate(parts)
            ]
            fields = {**fields, "message": {**message, "parts": parts}}
    return validate(MessageSendParams, fields)


def _kindless(part: Any) -> bool:
    return isinstance(part, dict) and "kind" not in part


def _with_kind(part: dict[str, Any], path: str) -> dict[str, Any]:
    """A part without `kind` as 0.3 writes it: a text, file or data part of 0.3's shape
    without the kind, or a 1.0 part (text, raw, url or data, with filename and mediaType)."""
    held = [name for name in _PART_CONTENT if name in part]
    if len(held) != 1:
        found = f"; it holds {' and '.join(held)}" if held else ""
        raise field_error(
            path,
            'needs "kind" ("text", "file" or "data"), or exactly one of text, file, data, '
            f"raw or url to say what it is{found}",
        )
    if held == ["file"]:
        return {**part, "kind": "file"}
    return PART.from_v1(part, path)


def _result(result: Any) -> bytes:
    if result is None:
        return b"null"
    if isinstance(result, A2AModel):
        return result.to_json()
    return json.dumps(
        [r.to_wire() if isinstance(r, A2AModel) else r for r in result], separators=(",", ":")
    ).encode()


def _record(record: EventRecord) -> bytes:
    return record.payload


_ADDED_IN_1_0: dict[str, Any] = {
    "supported_interfaces": True,
    "additional_interfaces": {"__all__": {"protocol_version", "tenant"}},
}


def agent_card(card: AgentCard) -> dict[str, Any]:
    """The card as 0.2 and 0.3 spell it: its canonical JSON without what 1.0 added, saying
    0.3.0 when it names no `protocolVersion`."""
    if card.protocol_version is None:
        card = card.model_copy(update={"protocol_version": CARD_PROTOCOL_VERSION})
    return card.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=_ADDED_IN_1_0)


def _card_result(card: AgentCard) -> bytes:
    return to_json(agent_card(card))


class V03Codec(JsonRpcCodec):
    """JSON-RPC as A2A 0.2.x and 0.3 define it."""

    version = ProtocolVersion.V0_3
    refused_stream_as_event = True
    methods = {
        "message/send": Method(lambda s: s.send_message, _send_params, _result, canonical=True),
        "message/stream": Method(lambda s: s.stream_message, _send_params, _record, streaming=True),
        "tasks/get": Method(lambda s: s.get_task, _params(TaskQueryParams), _result),
        "tasks/cancel": Method(lambda s: s.cancel_task, _params(TaskIdParams), _result),
        "tasks/resubscribe": Method(
            lambda s: s.resubscribe, _params(TaskIdParams), _record, streaming=True
        ),
        "tasks/pushNotificationConfig/set": Method(
            lambda s: s.set_push_config, _params(TaskPushNotificationConfig), _result
        ),
        "tasks/pushNotificationConfig/get": Method(
            lambda s: s.get_push_config, _params(GetTaskPushNotificationConfigParams), _result
        ),
        "tasks/pushNotificationConfig/list": Method(
            lambda s: s.list_push_configs, _params(ListTaskPushNotificationConfigParams), _result
        ),
        "tasks/pushNotificationConfig/delete": Method(
            lambda s: s.delete_push_config, _params(DeleteTaskPushNotificationConfigParams), _result
        ),
        "agent/getAuthenticatedExtendedCard": Method(
            lambda s: s.get_extended_card, no_params, _card_result
        ),
    }

    def error(self, error: A2AError) -> bytes:
        return legacy_error(error)


def legacy_error(error: A2AError) -> bytes:
    """The error object of the 0.x versions, which have no code for a missing extension."""
    if isinstance(error, ExtensionSupportRequired):
        error = InvalidRequest(error.message, data=error.data)
    return error.to_error_object().to_json()


# --- the client's direction: the canonical JSON both ways ------------------------------------


def error_from_object(error: Any) -> A2AError:
    """The A2AError a JSON-RPC error object received stands for."""
    return A2AError.from_error_object(JSONRPCError.model_validate(error))


def _configs(result: Any) -> list[TaskPushNotificationConfig]:
    return adapters.PUSH_CONFIGS.validate_python(result)


def _card(result: Any) -> AgentCard:
    return AgentCard.model_validate(result)


CLIENT: ClientCodec[None] = ClientCodec(
    version=ProtocolVersion.V0_3,
    send=ClientCall("message/send", A2AModel.to_wire, validated(adapters.SEND_RESULT)),
    stream=ClientCall("message/stream", A2AModel.to_wire, validated(adapters.STREAM_EVENT)),
    get_task=ClientCall("tasks/get", A2AModel.to_wire, validated(adapters.TASK)),
    cancel_task=ClientCall("tasks/cancel", A2AModel.to_wire, validated(adapters.TASK)),
    resubscribe=ClientCall("tasks/resubscribe", A2AModel.to_wire, validated(adapters.STREAM_EVENT)),
    set_push_config=ClientCall(
        "tasks/pushNotificationConfig/set", A2AModel.to_wire, validated(adapters.PUSH_CONFIG)
    ),
    get_push_config=ClientCall(
        "tasks/pushNotificationConfig/get", A2AModel.to_wire, validated(adapters.PUSH_CONFIG)
    ),
    list_push_configs=ClientCall("tasks/pushNotificationConfig/list", A2AModel.to_wire, _configs),
    delete_push_config=ClientCall("tasks/pushNotificationConfig/delete", A2AModel.to_wire, ignored),
    get_extended_card=ClientCall("agent/getAuthenticatedExtendedCard", nothing, _card),
    error=error_from_object,
)
"""A2A 0.3 JSON-RPC as a client calls it."""
