"""A2A errors as google.rpc details and 1.0 JSON-RPC error objects, both ways."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accord.errors import A2AError, InvalidParams
from accord.types import (
    JSONRPCError,
)

ERROR_DOMAIN = "a2a-protocol.org"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
_VALUE = "type.googleapis.com/google.protobuf.Value"

ERROR_REASONS = {
    -32001: "TASK_NOT_FOUND",
    -32002: "TASK_NOT_CANCELABLE",
    -32003: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    -32004: "UNSUPPORTED_OPERATION",
    -32005: "CONTENT_TYPE_NOT_SUPPORTED",
    -32006: "INVALID_AGENT_RESPONSE",
    -32007: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    -32008: "EXTENSION_SUPPORT_REQUIRED",
    -32009: "VERSION_NOT_SUPPORTED",
}
"""The `google.rpc.ErrorInfo` reason of each A2A-specific error code."""


def error_details(error: A2AError) -> list[dict[str, Any]]:
    """The error's details as ProtoJSON `Any` objects.

    A2A errors carry an ErrorInfo (string-valued data becomes its metadata); field problems
    of InvalidParams become a BadRequest; any other data travels as a protobuf Value.
    """
    details: list[dict[str, Any]] = []
    data = error.data
    reason = ERROR_REASONS.get(error.code)
    if reason is not None:
        info: dict[str, Any] = {"@type": _ERROR_INFO, "reason": reason, "domain": ERROR_DOMAIN}
        if isinstance(data, Mapping) and all(isinstance(v, str) for v in data.values()):
            info["metadata"], data = dict(data), None
        details.append(info)
    if isinstance(error, InvalidParams) and _is_field_problems(data):
        violations = [{"field": p["field"], "description": p["message"]} for p in data]
        details.append({"@type": _BAD_REQUEST, "fieldViolations": violations})
        data = None
    if data is not None:
        details.append({"@type": _VALUE, "value": data})
    return details


def _is_field_problems(data: Any) -> bool:
    return isinstance(data, list) and all(
        isinstance(p, dict) and set(p) == {"field", "message"} for p in data
    )


def error_object(error: A2AError) -> dict[str, Any]:
    """The JSON-RPC error object of `error` as 1.0 shapes it."""
    obj: dict[str, Any] = {"code": error.code, "message": error.message}
    details = error_details(error)
    if details:
        obj["data"] = details
    return obj


_REASON_CODES = {reason: code for code, reason in ERROR_REASONS.items()}


def error_data(details: Any) -> tuple[int | None, Any]:
    """The A2A error code an ErrorInfo of `details` names (None: none does) and the error's
    data, as `error_details` made them (the reverse of it)."""
    code: int | None = None
    data: Any = None
    for detail in details if isinstance(details, list) else ():
        if not isinstance(detail, dict):
            continue
        kind = detail.get("@type")
        if kind == _ERROR_INFO:
            code = _REASON_CODES.get(detail.get("reason", ""))
            data = detail.get("metadata", data)
        elif kind == _BAD_REQUEST:
            violations = detail.get("fieldViolations", [])
            data = [
                {"field": v.get("field", ""), "message": v.get("description", "")}
                for v in violations
            ]
        elif kind == _VALUE:
            data = detail.get("value")
    return code, data


def error_from_object(error: Any) -> A2AError:
    """The A2AError a 1.0 JSON-RPC error object stands for, its data from its details."""
    obj = JSONRPCError.model_validate(error)
    _, data = error_data(obj.data)
    return A2AError.from_error_object(obj.model_copy(update={"data": data}))
