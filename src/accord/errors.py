"""Protocol errors as exceptions, raised by agents and the runtime, mapped to wire codes."""

from __future__ import annotations

from typing import Any, ClassVar

from accord.types import JSONRPCError


class A2AError(Exception):
    """An error the protocol defines; `code` is its JSON-RPC error code."""

    code: ClassVar[int] = -32603
    default_message: ClassVar[str] = "Internal error"

    def __init__(self, message: str | None = None, *, data: Any = None) -> None:
        self.message = message or self.default_message
        self.data = data
        super().__init__(self.message)

    def to_error_object(self) -> JSONRPCError:
        """The JSON-RPC error object carrying this error."""
        return JSONRPCError(code=self.code, message=self.message, data=self.data)

    @staticmethod
    def from_error_object(error: JSONRPCError) -> A2AError:
        """The exception for an error object received from a peer."""
        cls = _BY_CODE.get(error.code, A2AError)
        exc = cls(error.message, data=error.data)
        if cls is A2AError:
            exc.code = error.code  # type: ignore[misc]
        return exc

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"


class ParseError(A2AError):
    code = -32700
    default_message = "Invalid JSON payload"


class InvalidRequest(A2AError):
    code = -32600
    default_message = "Invalid JSON-RPC request"


class MethodNotFound(A2AError):
    code = -32601
    default_message = "Method not found"


class InvalidParams(A2AError):
    code = -32602
    default_message = "Invalid method parameters"


class InternalError(A2AError):
    code = -32603
    default_message = "Internal error"


class TaskNotFound(A2AError):
    code = -32001
    default_message = "Task not found"


class TaskNotCancelable(A2AError):
    code = -32002
    default_message = "Task cannot be canceled"


class PushNotificationNotSupported(A2AError):
    code = -32003
    default_message = "Push Notification is not supported"


class UnsupportedOperation(A2AError):
    code = -32004
    default_message = "This operation is not supported"


class ContentTypeNotSupported(A2AError):
    code = -32005
    default_message = "Incompatible content types"


class InvalidAgentResponse(A2AError):
    code = -32006
    default_message = "Invalid agent response"


class AuthenticatedExtendedCardNotConfigured(A2AError):
    code = -32007
    default_message = "Authenticated Extended Card is not configured"


ExtendedAgentCardNotConfigured = AuthenticatedExtendedCardNotConfigured
"""The name A2A 1.0 gives -32007."""


class ExtensionSupportRequired(A2AError):
    code = -32008
    default_message = "A required extension was not declared by the client"


class VersionNotSupported(A2AError):
    code = -32009
    default_message = "This A2A protocol version is not supported"


class Unauthenticated(A2AError):
    """The request carries no credentials, or ones that do not authenticate anyone (HTTP 401).

    `challenges` are the `WWW-Authenticate` values naming what the agent accepts
    (`Bearer realm="agent"`, `Basic`, `ApiKey header="X-API-Key"`).
    """

    code = -32040
    default_message = "Authentication is required"

    def __init__(
        self, message: str | None = None, *, challenges: list[str] | None = None, data: Any = None
    ) -> None:
        super().__init__(message, data=data)
        self.challenges = challenges or []


class PermissionDenied(A2AError):
    """The caller is authenticated but may not do this (HTTP 403)."""

    code = -32041
    default_message = "Permission denied"


class RateLimited(A2AError):
    """The caller is over a limit of the server (HTTP 429, gRPC RESOURCE_EXHAUSTED);
    `retry_after` says in how many seconds to try again."""

    code = -32042
    default_message = "Too many requests"

    def __init__(
        self, message: str | None = None, *, retry_after: float = 1.0, data: Any = None
    ) -> None:
        super().__init__(message, data=data)
        self.retry_after = retry_after


class BodyTooLarge(InvalidRequest):
    """The request body is over the server's limit (HTTP 413)."""


class WrongContentType(InvalidRequest):
    """The request body is not declared as the binding's JSON (HTTP 415)."""


class MethodNotAllowed(MethodNotFound):
    """An HTTP+JSON route exists, but not with this HTTP method (HTTP 405)."""


class ServerBusy(RateLimited):
    """The server has no room for this request now (HTTP 503 with Retry-After)."""


class RequestTimedOut(A2AError):
    """The server gave up on a request that took longer than its limit (HTTP 504, gRPC
    DEADLINE_EXCEEDED); a task it started goes on."""

    code = -32043
    default_message = "The request took too long"


_BY_CODE: dict[int, type[A2AError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        TaskNotFound,
        TaskNotCancelable,
        PushNotificationNotSupported,
        UnsupportedOperation,
        ContentTypeNotSupported,
        InvalidAgentResponse,
        AuthenticatedExtendedCardNotConfigured,
        ExtensionSupportRequired,
        VersionNotSupported,
        Unauthenticated,
        PermissionDenied,
        RateLimited,
        RequestTimedOut,
    )
}


class A2AClientError(Exception):
    """The client could not complete a call: connection, HTTP or malformed response."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        self.status_code = status_code
        super().__init__(message)


class AgentUnreachable(A2AClientError):
    """No connection to the agent could be made: refused, no such host, no route, timed out."""
