"""JSON-RPC 2.0 envelopes of the A2A methods and the error objects they carry."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import SerializerFunctionWrapHandler, model_serializer

from accord.types._base import A2AModel
from accord.types.card import AgentCard
from accord.types.params import (
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    MessageSendParams,
    TaskIdParams,
    TaskQueryParams,
)
from accord.types.push import TaskPushNotificationConfig
from accord.types.tasks import SendResult, StreamEvent, Task

JsonRpcId = str | int | None


class JSONRPCError(A2AModel):
    """The error member of a JSON-RPC error response."""

    code: int
    message: str
    data: Any = None


class JSONParseError(JSONRPCError):
    code: Literal[-32700] = -32700
    message: str = "Invalid JSON payload"


class InvalidRequestError(JSONRPCError):
    code: Literal[-32600] = -32600
    message: str = "Request payload validation error"


class MethodNotFoundError(JSONRPCError):
    code: Literal[-32601] = -32601
    message: str = "Method not found"


class InvalidParamsError(JSONRPCError):
    code: Literal[-32602] = -32602
    message: str = "Invalid parameters"


class InternalError(JSONRPCError):
    code: Literal[-32603] = -32603
    message: str = "Internal error"


class TaskNotFoundError(JSONRPCError):
    code: Literal[-32001] = -32001
    message: str = "Task not found"


class TaskNotCancelableError(JSONRPCError):
    code: Literal[-32002] = -32002
    message: str = "Task cannot be canceled"


class PushNotificationNotSupportedError(JSONRPCError):
    code: Literal[-32003] = -32003
    message: str = "Push Notification is not supported"


class UnsupportedOperationError(JSONRPCError):
    code: Literal[-32004] = -32004
    message: str = "This operation is not supported"


class ContentTypeNotSupportedError(JSONRPCError):
    code: Literal[-32005] = -32005
    message: str = "Incompatible content types"


class InvalidAgentResponseError(JSONRPCError):
    code: Literal[-32006] = -32006
    message: str = "Invalid agent response"


class AuthenticatedExtendedCardNotConfiguredError(JSONRPCError):
    code: Literal[-32007] = -32007
    message: str = "Authenticated Extended Card is not configured"


A2AErrorObject = (
    JSONParseError
    | InvalidRequestError
    | MethodNotFoundError
    | InvalidParamsError
    | InternalError
    | TaskNotFoundError
    | TaskNotCancelableError
    | PushNotificationNotSupportedError
    | UnsupportedOperationError
    | ContentTypeNotSupportedError
    | InvalidAgentResponseError
    | AuthenticatedExtendedCardNotConfiguredError
)


class JSONRPCMessage(A2AModel):
    """What every JSON-RPC object has: the version tag and the correlation id."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: JsonRpcId = None

    @model_serializer(mode="wrap")
    def _keep_required_nulls(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # `id` (and `result` of a success) must be present even when null.
        data: dict[str, Any] = handler(self)
        data.setdefault("id", None)
        if "result" in type(self).model_fields:
            data.setdefault("result", None)
        return data


class JSONRPCRequest(JSONRPCMessage):
    """A call of any method."""

    method: str
    params: dict[str, Any] | None = None


class JSONRPCSuccessResponse(JSONRPCMessage):
    """A successful result of any method."""

    result: Any = None


class JSONRPCErrorResponse(JSONRPCMessage):
    """A failed call."""

    error: JSONRPCError


class A2ARequestBase(JSONRPCMessage):
    """A call of one A2A method: unlike a bare JSON-RPC request, it always has an id."""

    id: str | int


class SendMessageRequest(A2ARequestBase):
    method: Literal["message/send"] = "message/send"
    params: MessageSendParams


class SendStreamingMessageRequest(A2ARequestBase):
    method: Literal["message/stream"] = "message/stream"
    params: MessageSendParams


class GetTaskRequest(A2ARequestBase):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskQueryParams


class CancelTaskRequest(A2ARequestBase):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams


class TaskResubscriptionRequest(A2ARequestBase):
    method: Literal["tasks/resubscribe"] = "tasks/resubscribe"
    params: TaskIdParams


class SetTaskPushNotificationConfigRequest(A2ARequestBase):
    method: Literal["tasks/pushNotificationConfig/set"] = "tasks/pushNotificationConfig/set"
    params: TaskPushNotificationConfig


class GetTaskPushNotificationConfigRequest(A2ARequestBase):
    method: Literal["tasks/pushNotificationConfig/get"] = "tasks/pushNotificationConfig/get"
    params: GetTaskPushNotificationConfigParams | TaskIdParams


class ListTaskPushNotificationConfigRequest(A2ARequestBase):
    method: Literal["tasks/pushNotificationConfig/list"] = "tasks/pushNotificationConfig/list"
    params: ListTaskPushNotificationConfigParams


class DeleteTaskPushNotificationConfigRequest(A2ARequestBase):
    method: Literal["tasks/pushNotificationConfig/delete"] = "tasks/pushNotificationConfig/delete"
    params: DeleteTaskPushNotificationConfigParams


class GetAuthenticatedExtendedCardRequest(A2ARequestBase):
    method: Literal["agent/getAuthenticatedExtendedCard"] = "agent/getAuthenticatedExtendedCard"


A2ARequest = (
    SendMessageRequest
    | SendStreamingMessageRequest
    | GetTaskRequest
    | CancelTaskRequest
    | SetTaskPushNotificationConfigRequest
    | GetTaskPushNotificationConfigRequest
    | TaskResubscriptionRequest
    | ListTaskPushNotificationConfigRequest
    | DeleteTaskPushNotificationConfigRequest
    | GetAuthenticatedExtendedCardRequest
)


class SendMessageSuccessResponse(JSONRPCMessage):
    result: SendResult


class SendStreamingMessageSuccessResponse(JSONRPCMessage):
    result: StreamEvent


class GetTaskSuccessResponse(JSONRPCMessage):
    result: Task


class CancelTaskSuccessResponse(JSONRPCMessage):
    result: Task


class SetTaskPushNotificationConfigSuccessResponse(JSONRPCMessage):
    result: TaskPushNotificationConfig


class GetTaskPushNotificationConfigSuccessResponse(JSONRPCMessage):
    result: TaskPushNotificationConfig


class ListTaskPushNotificationConfigSuccessResponse(JSONRPCMessage):
    result: list[TaskPushNotificationConfig]


class DeleteTaskPushNotificationConfigSuccessResponse(JSONRPCMessage):
    result: None = None


class GetAuthenticatedExtendedCardSuccessResponse(JSONRPCMessage):
    result: AgentCard


SendMessageResponse = SendMessageSuccessResponse | JSONRPCErrorResponse
SendStreamingMessageResponse = SendStreamingMessageSuccessResponse | JSONRPCErrorResponse
GetTaskResponse = GetTaskSuccessResponse | JSONRPCErrorResponse
CancelTaskResponse = CancelTaskSuccessResponse | JSONRPCErrorResponse
SetTaskPushNotificationConfigResponse = (
    SetTaskPushNotificationConfigSuccessResponse | JSONRPCErrorResponse
)
GetTaskPushNotificationConfigResponse = (
    GetTaskPushNotificationConfigSuccessResponse | JSONRPCErrorResponse
)
ListTaskPushNotificationConfigResponse = (
    ListTaskPushNotificationConfigSuccessResponse | JSONRPCErrorResponse
)
DeleteTaskPushNotificationConfigResponse = (
    DeleteTaskPushNotificationConfigSuccessResponse | JSONRPCErrorResponse
)
GetAuthenticatedExtendedCardResponse = (
    GetAuthenticatedExtendedCardSuccessResponse | JSONRPCErrorResponse
)
JSONRPCResponse = (
    JSONRPCErrorResponse
    | SendMessageSuccessResponse
    | SendStreamingMessageSuccessResponse
    | GetTaskSuccessResponse
    | CancelTaskSuccessResponse
    | SetTaskPushNotificationConfigSuccessResponse
    | GetTaskPushNotificationConfigSuccessResponse
    | ListTaskPushNotificationConfigSuccessResponse
    | DeleteTaskPushNotificationConfigSuccessResponse
    | GetAuthenticatedExtendedCardSuccessResponse
)
