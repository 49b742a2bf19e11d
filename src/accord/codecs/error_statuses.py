"""Each A2A error as every binding answers it: one row per error, one column per binding."""

from __future__ import annotations

from dataclasses import dataclass

from accord.errors import (
    A2AError,
    AuthenticatedExtendedCardNotConfigured,
    BodyTooLarge,
    ContentTypeNotSupported,
    ExtensionSupportRequired,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    InvalidRequest,
    MethodNotAllowed,
    MethodNotFound,
    ParseError,
    PermissionDenied,
    PushNotificationNotSupported,
    RateLimited,
    RequestTimedOut,
    ServerBusy,
    TaskNotCancelable,
    TaskNotFound,
    Unauthenticated,
    UnsupportedOperation,
    VersionNotSupported,
    WrongContentType,
)


@dataclass(frozen=True, slots=True)
class ErrorStatus:
    """How the bindings answer one error; its JSON-RPC code is the error's own `code`."""

    jsonrpc: int
    """The HTTP status of the JSON-RPC response: 200 (the envelope says the error), except where
    HTTP has a status a client's HTTP stack acts on (authentication, limits, the body)."""
    http: int
    """The HTTP+JSON status (spec 1.0, section 5.4)."""
    grpc: str
    """The gRPC status, by name; also the `status` of an HTTP+JSON `google.rpc.Status` body."""


_ROWS: dict[type[A2AError], ErrorStatus] = {
    # error                                  JSON-RPC  HTTP+JSON  gRPC
    A2AError:                    ErrorStatus(200,      500,       "INTERNAL"),
    ParseError:                  ErrorStatus(200,      400,       "INVALID_ARGUMENT"),
    InvalidRequest:              ErrorStatus(200,      400,       "INVALID_ARGUMENT"),
    BodyTooLarge:                ErrorStatus(413,      413,       "RESOURCE_EXHAUSTED"),
    WrongContentType:            ErrorStatus(415,      415,       "INVALID_ARGUMENT"),
    MethodNotFound:              ErrorStatus(200,      404,       "NOT_FOUND"),
    MethodNotAllowed:            ErrorStatus(200,      405,       "UNIMPLEMENTED"),
    InvalidParams:               ErrorStatus(200,      400,       "INVALID_ARGUMENT"),
    InternalError:               ErrorStatus(200,      500,       "INTERNAL"),
    TaskNotFound:                ErrorStatus(200,      404,       "NOT_FOUND"),
    TaskNotCancelable:           ErrorStatus(200,      400,       "FAILED_PRECONDITION"),
    PushNotificationNotSupported: ErrorStatus(200,     400,       "FAILED_PRECONDITION"),
    UnsupportedOperation:        ErrorStatus(200,      400,       "FAILED_PRECONDITION"),
    ContentTypeNotSupported:     ErrorStatus(200,      400,       "INVALID_ARGUMENT"),
    InvalidAgentResponse:        ErrorStatus(200,      500,       "INTERNAL"),
    AuthenticatedExtendedCardNotConfigured: ErrorStatus(200, 400, "FAILED_PRECONDITION"),
    ExtensionSupportRequired:    ErrorStatus(200,      400,       "FAILED_PRECONDITION"),
    VersionNotSupported:         ErrorStatus(200,      400,       "FAILED_PRECONDITION"),
    Unauthenticated:             ErrorStatus(401,      401,       "UNAUTHENTICATED"),
    PermissionDenied:            ErrorStatus(403,      403,       "PERMISSION_DENIED"),
    RateLimited:                 ErrorStatus(429,      429,       "RESOURCE_EXHAUSTED"),
    ServerBusy:                  ErrorStatus(503,      503,       "UNAVAILABLE"),
    RequestTimedOut:             ErrorStatus(200,      504,       "DEADLINE_EXCEEDED"),
}  # fmt: skip
"""Accord's own errors (Unauthenticated and below, the HTTP layer's) have no status in the
spec: theirs are HTTP's and gRPC's for the same refusal."""


_BY_CODE: dict[int, ErrorStatus] = {}
for _cls, _row in _ROWS.items():
    _BY_CODE.setdefault(_cls.code, _row)  # a code's first row is its protocol error's


def error_status(error: A2AError) -> ErrorStatus:
    """How every binding answers `error`: the row of its class or of the nearest base class
    that has one; an error of no listed class but A2AError (one a peer sent, one of an agent's
    own) by its code, InternalError's when the code is none of the protocol's."""
    for cls in type(error).__mro__:
        if cls is A2AError:
            break
        row = _ROWS.get(cls)
        if row is not None:
            return row
    return _BY_CODE.get(error.code, _ROWS[A2AError])
