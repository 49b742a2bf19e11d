"""What a codec gives the JSON-RPC binding: its methods, their params and results, its errors."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, TypeAdapter, ValidationError

from accord.codecs.field_problems import describe, field_problems
from accord.codecs.versions import ProtocolVersion
from accord.core.call_context import CallContext
from accord.core.operations import Operations
from accord.errors import A2AError, InvalidParams
from accord.types import (
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    Message,
    MessageSendParams,
    StreamEvent,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
)

Operation = Callable[[Operations], Callable[[Any, CallContext], Awaitable[Any]]]
"""What a method runs, given the operations: usually one of them (`lambda ops: ops.get_task`),
or a version's adaptation of them (0.1's send starts tasks under the ids its clients choose)."""

ModelT = TypeVar("ModelT", bound=BaseModel)
P = TypeVar("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Method:
    """One operation as a protocol version carries it (a JSON-RPC method, a route, an RPC).

    `operation` picks the coroutine it runs from the `Operations`; `decode` turns the
    request's params (None when absent) into that coroutine's canonical parameters, raising
    InvalidParams that name the field; `encode` turns its result into the JSON of the
    response — for a streaming method, of one EventRecord. `canonical`: `encode` writes a
    protocol object as its `to_json()`, so JSON already made of the result may stand for it.
    """

    operation: Operation
    decode: Callable[[Any], Any]
    encode: Callable[[Any], bytes]
    streaming: bool = False
    canonical: bool = False


class JsonRpcCodec(ABC):
    """The JSON-RPC face of one protocol version: method names, parameter and result shapes."""

    version: ProtocolVersion
    methods: Mapping[str, Method]
    refused_stream_as_event: bool
    """Whether a streaming method refused before its first event answers a client accepting
    `text/event-stream` with one event holding the error response (0.1, 0.3: a streaming
    method answers with an event stream) or, as 1.0's official SDKs serve and expect it, with
    the plain JSON-RPC error response (see docs/versions.md)."""

    @abstractmethod
    def error(self, error: A2AError) -> bytes:
        """The JSON of the `error` member carrying `error`."""


def validate(model: type[ModelT], data: Any, path: str = "") -> ModelT:
    """`data` as a `model`, or InvalidParams naming each bad field (prefixed with `path`)."""
    try:
        # What `model_validate` does, without its checks of arguments not given here.
        return cast(ModelT, model.__pydantic_validator__.validate_python(data))
    except ValidationError as exc:
        raise invalid_params(field_problems(exc, data, path)) from None


def field_error(field: str, message: str) -> InvalidParams:
    """InvalidParams about one field."""
    return invalid_params([{"field": field, "message": message}])


def invalid_params(found: list[dict[str, str]]) -> InvalidParams:
    """InvalidParams describing the first problem found and carrying all of them as data."""
    return InvalidParams(describe(found), data=found)


def no_params(params: Any) -> None:
    """The `decode` of a method that takes no parameters."""
    if params not in (None, {}):
        raise invalid_params([{"field": "", "message": "this method takes no params"}])


def params_object(params: Any) -> dict[str, Any]:
    """`params` when it is a JSON object (A2A methods take named parameters only)."""
    if not isinstance(params, dict):
        raise invalid_params([{"field": "", "message": "params must be an object"}])
    return params


# --- the client's direction ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClientCall(Generic[P, R]):
    """One operation as a client calls it: `name` is the JSON-RPC method (or HTTP+JSON route
    name); `encode` turns canonical parameters into the wire's request fields (None: no
    params), `decode` the wire's result (one stream event, for a streaming call) into a
    canonical object, raising InvalidParams or ValidationError when it is not one."""

    name: str
    encode: Callable[[P], dict[str, Any] | None]
    decode: Callable[[Any], R]


@dataclass(frozen=True, slots=True)
class ClientCodec(Generic[P]):
    """The operations of one protocol version as a client calls them; `list_tasks` (1.0 only)
    takes the version's own parameters `P`. `error` turns a JSON-RPC error object received
    into the A2AError it stands for."""

    version: ProtocolVersion
    send: ClientCall[MessageSendParams, Task | Message]
    stream: ClientCall[MessageSendParams, StreamEvent]
    get_task: ClientCall[TaskQueryParams, Task]
    cancel_task: ClientCall[TaskIdParams, Task]
    resubscribe: ClientCall[TaskIdParams, StreamEvent]
    set_push_config: ClientCall[TaskPushNotificationConfig, TaskPushNotificationConfig]
    get_push_config: ClientCall[GetTaskPushNotificationConfigParams, TaskPushNotificationConfig]
    list_push_configs: ClientCall[
        ListTaskPushNotificationConfigParams, list[TaskPushNotificationConfig]
    ]
    delete_push_config: ClientCall[DeleteTaskPushNotificationConfigParams, None]
    get_extended_card: ClientCall[None, AgentCard]
    error: Callable[[Any], A2AError]
    list_tasks: ClientCall[P, Any] | None = None


def validated(
    adapter: TypeAdapter[R], convert: Callable[[Any, str], Any] | None = None
) -> Callable[[Any], R]:
    """A decoder: the wire JSON (converted to 0.3 JSON by `convert`, if given) as a model, or
    InvalidParams naming each bad field."""

    def decode(value: Any) -> R:
        data = convert(value, "") if convert else value
        try:
            return adapter.validate_python(data)
        except ValidationError as exc:
            raise invalid_params(field_problems(exc, data)) from None

    return decode


def nothing(params: None) -> None:
    """The encoder of a call without params."""


def ignored(result: Any) -> None:
    """The decoder of a call whose result says nothing (a delete)."""
