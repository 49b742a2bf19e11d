"""The A2A 1.0 JSON-RPC codec: PascalCase methods, ProtoJSON shapes converted to and from 0.3."""

from __future__ import annotations

from functools import partial
from typing import Any, Self

from pydantic import Field, ValidationError
from pydantic_core import core_schema as cs
from pydantic_core import from_json, to_json

from accord.codecs.base import (
    JsonRpcCodec,
    Method,
    field_error,
    validate,
)
from accord.codecs.card_v1_0 import agent_card
from accord.codecs.error_details import error_object
from accord.codecs.protojson import (
    MESSAGE,
    SEND_MESSAGE_RESPONSE,
    STREAM_RESPONSE,
    TASK,
    TASK_STATE,
    Converter,
    proto_object,
)
from accord.codecs.protojson_models import MESSAGE_READ, reading, validator, write, write_member
from accord.codecs.versions import ProtocolVersion
from accord.core.push import PushFormat, register_push_format
from accord.core.query import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    ListTasksParams,
    TaskPage,
    TaskQuery,
    parse_timestamp,
)
from accord.core.records import EventRecord
from accord.errors import A2AError, InvalidParams
from accord.types import (
    A2AModel,
    AgentCard,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
)

# --- request envelopes: 1.0 wire models, turned into the canonical parameters ----------------


class AuthenticationInfo(A2AModel):
    """How the agent authenticates to a webhook: one HTTP scheme (0.3 had a list)."""

    scheme: str
    credentials: str | None = None


class ProtoTaskPushNotificationConfig(A2AModel):
    """1.0 TaskPushNotificationConfig: the 0.3 config and its task id in one flat object."""

    id: str | None = None
    task_id: str | None = None
    url: str
    token: str | None = None
    authentication: AuthenticationInfo | None = None

    def canonical(self) -> PushNotificationConfig:
        auth = self.authentication
        return PushNotificationConfig(
            url=self.url,
            id=self.id or None,
            token=self.token or None,
            authentication=PushNotificationAuthenticationInfo(
                schemes=[auth.scheme], credentials=auth.credentials
            )
            if auth
            else None,
        )

    @classmethod
    def of(cls, config: TaskPushNotificationConfig) -> Self:
        return cls.of_push(config.push_notification_config, config.task_id)

    @classmethod
    def of_push(cls, push: PushNotificationConfig, task_id: str | None) -> Self:
        auth = push.authentication
        return cls(
            id=push.id,
            task_id=task_id,
            url=push.url,
            token=push.token,
            authentication=AuthenticationInfo(scheme=auth.schemes[0], credentials=auth.credentials)
            if auth and auth.schemes
            else None,
        )


class SendMessageConfiguration(A2AModel):
    """1.0 SendMessageConfiguration: `returnImmediately` instead of `blocking`."""

    accepted_output_modes: list[str] | None = None
    task_push_notification_config: ProtoTaskPushNotificationConfig | None = None
    history_length: int | None = Field(default=None, ge=0)
    return_immediately: bool = False

    def canonical(self) -> MessageSendConfiguration:
        push = self.task_push_notification_config
        return MessageSendConfiguration(
            accepted_output_modes=self.accepted_output_modes,
            blocking=not self.return_immediately,
            history_length=self.history_length,
            push_notification_config=push.canonical() if push else None,
        )


class SendMessageRequest(A2AModel):
    """1.0 SendMessageRequest (the message is converted on its own, see MESSAGE)."""

    message: dict[str, Any]
    configuration: SendMessageConfiguration | None = None
    metadata: dict[str, Any] | None = None


class ListTasksRequest(A2AModel):
    """1.0 ListTasksRequest."""

    context_id: str | None = None
    status: str | int | None = None
    page_size: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    page_token: str | None = None
    history_length: int | None = Field(default=None, ge=0)
    status_timestamp_after: str | None = None
    include_artifacts: bool = False


class PushConfigName(A2AModel):
    """1.0 Get/DeleteTaskPushNotificationConfigRequest: a task and one of its configs."""

    task_id: str
    id: str


class ListTaskPushNotificationConfigsRequest(A2AModel):
    """1.0 ListTaskPushNotificationConfigsRequest (every config fits on one page here)."""

    task_id: str
    page_size: int | None = Field(default=None, ge=0)
    page_token: str | None = None


_SEND_MESSAGE_PARAMS = validator(
    reading(
        MessageSendParams,
        extra="ignore",  # the tenant, which this server does not route by
        message=MESSAGE_READ,
        configuration=cs.with_default_schema(
            cs.nullable_schema(
                cs.no_info_after_validator_function(
                    SendMessageConfiguration.canonical,
                    SendMessageConfiguration.__pydantic_core_schema__,
                )
            ),
            default=None,
        ),
    )
)
"""A SendMessageRequest read straight into MessageSendParams, for the request as nearly every
client sends it (1.0 names only, no nulls where a value is needed, every part a plain one)."""


def send_message_request(params: Any) -> MessageSendParams:
    # A member with "_" may be a proto name the converters rename: theirs to read. (JSON
    # names are strings: joined, they are looked through in C.)
    if type(params) is dict and "_" not in "".join(params):
        try:
            return _SEND_MESSAGE_PARAMS.validate_python(params)  # type: ignore[no-any-return]
        except ValidationError:
            pass  # the converters accept what it does not, or say what is wrong and where
    return converted_send_message_request(params)


def converted_send_message_request(params: Any) -> MessageSendParams:
    """`send_message_request` the general way: the 1.0 message converted to 0.3 JSON first."""
    fields = proto_object(params, "")
    message = fields.get("message")
    configuration = metadata = None
    # A message alone, as most clients send it, has no request around it to validate.
    if len(fields) != 1 or type(message) is not dict:
        request = validate(SendMessageRequest, fields)
        message, metadata = request.message, request.metadata
        configuration = request.configuration.canonical() if request.configuration else None
    # No `parts` is no part (as ProtoJSON of gRPC writes an empty list): refused as such.
    converted = {"parts": [], **MESSAGE.from_v1(message, "message")}
    # The message is validated with the parameters, its errors named from `message` on.
    canonical = {"message": converted, "configuration": configuration, "metadata": metadata}
    return validate(MessageSendParams, canonical)


def get_task_request(params: Any) -> TaskQueryParams:
    return validate(TaskQueryParams, proto_object(params, ""))


def task_id_request(params: Any) -> TaskIdParams:
    """CancelTaskRequest and SubscribeToTaskRequest."""
    return validate(TaskIdParams, proto_object(params, ""))


def list_tasks_request(params: Any) -> ListTasksParams:
    request = validate(ListTasksRequest, proto_object(params, ""))
    status = request.status
    state = None
    if status not in (None, "", 0, "TASK_STATE_UNSPECIFIED"):
        state = TaskState(TASK_STATE.from_v1(status, "status"))
    after = None
    if request.status_timestamp_after:
        try:
            after = parse_timestamp(request.status_timestamp_after)
        except InvalidParams as exc:
            raise field_error("statusTimestampAfter", exc.message) from None
    query = TaskQuery(
        context_id=request.context_id or None,
        state=state,
        updated_after=after,
        page_size=request.page_size,
        page_token=request.page_token or None,
    )
    return ListTasksParams(query, request.history_length, request.include_artifacts)


def create_push_config_request(params: Any) -> TaskPushNotificationConfig:
    request = validate(ProtoTaskPushNotificationConfig, proto_object(params, ""))
    if not request.task_id:
        raise field_error("taskId", "Field required")
    return TaskPushNotificationConfig(
        task_id=request.task_id, push_notification_config=request.canonical()
    )


def get_push_config_request(params: Any) -> GetTaskPushNotificationConfigParams:
    request = validate(PushConfigName, proto_object(params, ""))
    return GetTaskPushNotificationConfigParams(
        id=request.task_id, push_notification_config_id=request.id
    )


def list_push_configs_request(params: Any) -> ListTaskPushNotificationConfigParams:
    request = validate(ListTaskPushNotificationConfigsRequest, proto_object(params, ""))
    return ListTaskPushNotificationConfigParams(id=request.task_id)


def delete_push_config_request(params: Any) -> DeleteTaskPushNotificationConfigParams:
    request = validate(PushConfigName, proto_object(params, ""))
    return DeleteTaskPushNotificationConfigParams(
        id=request.task_id, push_notification_config_id=request.id
    )


def get_extended_card_request(params: Any) -> None:
    """GetExtendedAgentCardRequest: only a tenant, which this server does not route by."""
    if params is not None:
        proto_object(params, "")


# --- results ---------------------------------------------------------------------------------

A2A_JSON = "application/a2a+json"
"""The media type A2A 1.0 registers for its JSON (HTTP+JSON bodies, webhook notifications)."""

STREAM_ENCODING = "1.0"
"""The key of a record's 1.0 StreamResponse JSON in `EventRecord.encodings`."""


def task_result(task: Task) -> bytes:
    return write(TASK, task)


def send_message_result(result: Task | Message) -> bytes:
    return write_member(SEND_MESSAGE_RESPONSE, result)


def stream_result(record: EventRecord) -> bytes:
    """The StreamResponse JSON of a record, made once per record: written from its event,
    except a task snapshot's, converted from its 0.3 payload (a snapshot's event is the live
    task, which moves on; the other events never change once recorded)."""
    encoded = record.encodings.get(STREAM_ENCODING)
    if encoded is None:
        event = record.event
        if event is None or isinstance(event, Task):
            return converted_record(record, STREAM_ENCODING, STREAM_RESPONSE)
        encoded = record.encodings[STREAM_ENCODING] = write_member(STREAM_RESPONSE, event)
    return encoded


class StreamResponses(PushFormat):
    """How 1.0 webhooks are notified (spec 1.0, 4.3.3): every event of the task, in order, as
    the StreamResponse a stream carries (the same bytes), typed `application/a2a+json`."""

    name = "stream-response/1.0"
    media_type = A2A_JSON

    def body(self, record: EventRecord, task: Task) -> bytes:
        return stream_result(record)


PUSH_FORMAT = register_push_format(StreamResponses()).name
"""The payload format of webhooks registered in 1.0 (with a config, or inline with a message)."""


def converted_record(record: EventRecord, key: str, converter: Converter) -> bytes:
    """The record's 0.3 payload converted to ProtoJSON, made once and kept under `key`."""
    encoded = record.encodings.get(key)
    if encoded is None:
        encoded = to_json(converter.to_v1(from_json(record.payload)))
        record.encodings[key] = encoded
    return encoded


def list_tasks_result(page: TaskPage) -> bytes:
    tasks = b",".join([task_result(task) for task in page.tasks])
    # The members after `tasks`, as to_json writes them, `{` and all: joined after the tasks.
    rest = to_json(
        {
            "nextPageToken": page.next_page_token,
            "pageSize": page.page_size,
            "totalSize": page.total_size,
        }
    )
    return b'{"tasks":[' + tasks + b"]," + rest[1:]


def push_config_result(config: TaskPushNotificationConfig) -> bytes:
    return ProtoTaskPushNotificationConfig.of(config).to_json()


def push_configs_result(configs: list[TaskPushNotificationConfig]) -> bytes:
    listed = [ProtoTaskPushNotificationConfig.of(config).to_wire() for config in configs]
    return to_json({"configs": listed, "nextPageToken": ""})


def empty_result(result: None) -> bytes:
    return b"{}"


def agent_card_result(card: AgentCard) -> bytes:
    return to_json(agent_card(card))


class V10Codec(JsonRpcCodec):
    """JSON-RPC as A2A 1.0 defines it."""

    version = ProtocolVersion.V1_0
    refused_stream_as_event = False
    methods = {
        "SendMessage": Method(
            lambda s: partial(s.send_message, push_format=PUSH_FORMAT),
            send_message_request,
            send_message_result,
        ),
        "SendStreamingMessage": Method(
            lambda s: partial(s.stream_message, push_format=PUSH_FORMAT),
            send_message_request,
            stream_result,
            streaming=True,
        ),
        "GetTask": Method(lambda s: s.get_task, get_task_request, task_result),
        "ListTasks": Method(lambda s: s.list_tasks, list_tasks_request, list_tasks_result),
        "CancelTask": Method(lambda s: s.cancel_task, task_id_request, task_result),
        "SubscribeToTask": Method(
            lambda s: s.resubscribe, task_id_request, stream_result, streaming=True
        ),
        "CreateTaskPushNotificationConfig": Method(
            lambda s: partial(s.set_push_config, push_format=PUSH_FORMAT),
            create_push_config_request,
            push_config_result,
        ),
        "GetTaskPushNotificationConfig": Method(
            lambda s: s.get_push_config, get_push_config_request, push_config_result
        ),
        "ListTaskPushNotificationConfigs": Method(
            lambda s: s.list_push_configs, list_push_configs_request, push_configs_result
        ),
        "DeleteTaskPushNotificationConfig": Method(
            lambda s: s.delete_push_config, delete_push_config_request, empty_result
        ),
        "GetExtendedAgentCard": Method(
            lambda s: s.get_extended_card, get_extended_card_request, agent_card_result
        ),
    }

    def error(self, error: A2AError) -> bytes:
        return to_json(error_object(error))
