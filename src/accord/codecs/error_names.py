"""The names A2A 0.3 clients know the protocol errors by, and the error shapes carrying them."""

from __future__ import annotations

from typing import Any

from accord.errors import A2AError
from accord.types import JSONRPCError

ERROR_TYPE_NAMES: dict[int, str] = {
    -32700: "JSONParseError",
    -32600: "InvalidRequestError",
    -32601: "MethodNotFoundError",
    -32602: "InvalidParamsError",
    -32603: "InternalError",
    -32001: "TaskNotFoundError",
    -32002: "TaskNotCancelableError",
    -32003: "PushNotificationNotSupportedError",
    -32004: "UnsupportedOperationError",
    -32005: "ContentTypeNotSupportedError",
    -32006: "InvalidAgentResponseError",
    -32007: "ExtendedAgentCardNotConfiguredError",
    -32008: "ExtensionSupportRequiredError",
    -32009: "VersionNotSupportedError",
}
"""The type name of each error code; an error with another code goes by its own class name.

0.3 fixed no error body for HTTP+JSON and no status message for gRPC. The clients in the field
read a JSON-RPC `code` beside the `message` (the TypeScript SDK), or the error's class name as
`type` in the body and as `<TypeName>: <message>` in a gRPC status message (the official Python
SDK, whose class names these are).
"""

CODES_BY_TYPE_NAME = {name: code for code, name in ERROR_TYPE_NAMES.items()}


def error_type_name(error: A2AError) -> str:
    """The name 0.3 clients know `error` by."""
    return ERROR_TYPE_NAMES.get(error.code) or type(error).__name__


def typed_message(error: A2AError) -> str:
    """`error`'s message as a 0.3 gRPC status message: `TaskNotFoundError: no task ...`."""
    return f"{error_type_name(error)}: {error.message}"


def typed_members(error: A2AError) -> dict[str, Any]:
    """The members a 0.3 HTTP+JSON error body has beside its `error`: the JSON-RPC `code`, the
    `message` and the `type` name."""
    return {"code": error.code, "message": error.message, "type": error_type_name(error)}


def error_of_type(type_name: Any, message: str) -> A2AError | None:
    """The A2AError a 0.3 type name stands for, with `message` (None: no name known)."""
    code = CODES_BY_TYPE_NAME.get(type_name) if isinstance(type_name, str) else None
    if code is None:
        return None
    return A2AError.from_error_object(JSONRPCError(code=code, message=message))


def error_from_typed_message(text: str) -> A2AError | None:
    """The A2AError of a status message `TaskNotFoundError: ...` (None: it names no type)."""
    type_name, found, message = text.partition(": ")
    return error_of_type(type_name, message) if found else None
