"""The A2A 1.0 JSON-RPC codec: PascalCase methods, ProtoJSON shapes converted to and from 0.3."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Protocol, Self

from pydantic import Field
from pydantic.alias_generators import to_camel
from pydantic_core import from_json, to_json

from accord.codecs.base import (
    ClientCall,
    ClientCodec,
    JsonRpcCodec,
    Method,
    field_error,
    ignored,
    nothing,
    validate,
    validated,
)
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
    AgentInterface,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    JSONRPCError,
    ListTaskPushNotificationConfigParams,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    adapters,
)

# --- data objects: one converter per message type, both directions ----------------------------
#
# Each converter turns the 0.3 JSON of an object into its 1.0 ProtoJSON (`to_v1`), and the
# ProtoJSON a client sent back into 0.3 JSON (`from_v1`), naming the field in every error. The
# 0.3 JSON is what the canonical models (accord.types) read and write.


class Converter(Protocol):
    """Converts one message type between its 0.3 JSON and its 1.0 ProtoJSON."""

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def from_v1(self, value: Any, path: str) -> dict[str, Any]: ...


class ProtoEnum:
    """A proto enum: its ProtoJSON names in number order, each with its 0.3 value (or None)."""

    def __init__(self, name: str, values: Sequence[tuple[str, str | None]]) -> None:
        self.name = name
        self._to_v1 = {old: new for new, old in values if old is not None}
        self._from_v1: dict[str | int, str] = {}
        for number, (new, old) in enumerate(values):
            if old is not None:
                self._from_v1[new] = self._from_v1[number] = old
        self.names = [new for new, old in values if old is not None]

    def to_v1(self, value: str) -> str:
        return self._to_v1[value]

    def from_v1(self, value: Any, path: str) -> str:
        """The 0.3 value of a ProtoJSON enum value (its name, or its number)."""
        if isinstance(value, str | int) and not isinstance(value, bool):
            found = self._from_v1.get(value)
            if found is not None:
                return found
        raise field_error(
            path, f"{value!r} is not a {self.name}; use one of {', '.join(self.names)}"
        )


ROLE = ProtoEnum(
    "Role", [("ROLE_UNSPECIFIED", None), ("ROLE_USER", Role.USER), ("ROLE_AGENT", Role.AGENT)]
)
TASK_STATE = ProtoEnum(
    "TaskState",
    [
        ("TASK_STATE_UNSPECIFIED", TaskState.UNKNOWN),
        ("TASK_STATE_SUBMITTED", TaskState.SUBMITTED),
        ("TASK_STATE_WORKING", TaskState.WORKING),
        ("TASK_STATE_COMPLETED", TaskState.COMPLETED),
        ("TASK_STATE_FAILED", TaskState.FAILED),
        ("TASK_STATE_CANCELED", TaskState.CANCELED),
        ("TASK_STATE_INPUT_REQUIRED", TaskState.INPUT_REQUIRED),
        ("TASK_STATE_REJECTED", TaskState.REJECTED),
        ("TASK_STATE_AUTH_REQUIRED", TaskState.AUTH_REQUIRED),
    ],
)


def proto_object(value: Any, path: str) -> dict[str, Any]:
    """A ProtoJSON object: members under their lowerCamelCase names (proto names accepted too),
    null members dropped (null means the default in ProtoJSON)."""
    if not isinstance(value, dict):
        raise field_error(path or "params", "must be an object")
    return {to_camel(k) if "_" in k else k: v for k, v in value.items() if v is not None}


def _join(path: str, name: str | int) -> str:
    return f"{path}.{name}" if path else str(name)


class Shape:
    """A message type whose two JSON forms differ only in a few members.

    `kind` is its 0.3 discriminator (1.0 has none); `enums` are members holding an enum;
    `one` and `many` are members holding one, or a list of, nested messages; `only_v0_3`
    are 0.3 members 1.0 does not have; `renamed` maps a 0.3 member to its ProtoJSON name
    where they differ (the 0.3 proto, see codecs.rest_v0_3). Every other member is the same.
    """

    def __init__(
        self,
        *,
        kind: str | None = None,
        enums: Mapping[str, ProtoEnum] | None = None,
        one: Mapping[str, Converter] | None = None,
        many: Mapping[str, Converter] | None = None,
        only_v0_3: Sequence[str] = (),
        renamed: Mapping[str, str] | None = None,
    ) -> None:
        self.kind = kind
        self.enums = enums or {}
        self.one = one or {}
        self.many = many or {}
        self.only_v0_3 = frozenset(("kind", *only_v0_3))
        self.renamed = dict(renamed or {})

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in obj.items() if k not in self.only_v0_3}
        for name, enum in self.enums.items():
            if name in out:
                out[name] = enum.to_v1(out[name])
        for name, child in self.one.items():
            if name in out:
                out[name] = child.to_v1(out[name])
        for name, child in self.many.items():
            if name in out:
                out[name] = [child.to_v1(item) for item in out[name]]
        for name, wire in self.renamed.items():
            if name in out:
                out[wire] = out.pop(name)
        return out

    def from_v1(self, value: Any, path: str) -> dict[str, Any]:
        out = proto_object(value, path)
        for name, wire in self.renamed.items():
            if name in out:  # a likely mix-up of the two forms, which would lose data
                raise field_error(_join(path, name), f"not a member here; did you mean {wire}?")
            if wire in out:
                out[name] = out.pop(wire)
        for name, enum in self.enums.items():
            if name in out:
                out[name] = enum.from_v1(out[name], self._path(path, name))
        for name, child in self.one.items():
            if name in out:
                out[name] = child.from_v1(out[name], self._path(path, name))
        for name, child in self.many.items():
            if name in out:
                items = out[name]
                where = self._path(path, name)
                if not isinstance(items, list):
                    raise field_error(where, "must be a list")
                out[name] = [child.from_v1(item, _join(where, i)) for i, item in enumerate(items)]
        if self.kind is not None:
            out["kind"] = self.kind
        return out

    def _path(self, path: str, name: str) -> str:
        """Where member `name` is, as the client spelled it."""
        return _join(path, self.renamed.get(name, name))


class StatusUpdateShape(Shape):
    """TaskStatusUpdateEvent: 1.0 dropped `final`; a status that ends a stream implies it."""

    def from_v1(self, value: Any, path: str) -> dict[str, Any]:
        out = super().from_v1(value, path)
        status = out.get("status")
        state = status.get("state") if isinstance(status, dict) else None
        out["final"] = state in _FINAL_STATES
        return out


_FINAL_STATES = {state.value for state in TaskState if state.is_terminal or state.is_interrupted}

# 1.0 Part: exactly one content member; `raw` and `url` are the two forms of a 0.3 file part.
_PART_KIND = {"text": "text", "raw": "file", "url": "file", "data": "data"}
_FILE_CONTENT = {"raw": "bytes", "url": "uri"}  # 1.0 part member -> 0.3 file member
_FILE_INFO = {"mediaType": "mimeType", "filename": "name"}  # 1.0 part member -> 0.3 file member


class PartConverter:
    """Part: a 1.0 part holds one of text, raw, url or data; a 0.3 part is a `kind` union.

    A 1.0 media type or file name on a text or data part has no place in 0.3 and is dropped.
    """

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        kind = obj["kind"]
        if kind == "file":
            file = obj["file"]
            for new, old in _FILE_CONTENT.items():
                if old in file:
                    out[new] = file[old]
            for new, old in _FILE_INFO.items():
                if old in file:
                    out[new] = file[old]
        else:
            out[kind] = obj[kind]
        if "metadata" in obj:
            out["metadata"] = obj["metadata"]
        return out

    def from_v1(self, value: Any, path: str) -> dict[str, Any]:
        part = proto_object(value, path)
        present = [member for member in _PART_KIND if member in part]
        if len(present) != 1:
            found = f" (found {', '.join(present)})" if present else ""
            raise field_error(path, f"a part holds exactly one of text, raw, url or data{found}")
        member = present[0]
        for name in (*_FILE_INFO, member):
            if name != "data" and name in part and not isinstance(part[name], str):
                raise field_error(_join(path, name), "must be a string")
        if member == "data" and not isinstance(part["data"], dict):
            raise field_error(_join(path, "data"), "this server takes only JSON objects as data")
        out: dict[str, Any] = {"kind": _PART_KIND[member]}
        if member in _FILE_CONTENT:
            file = {_FILE_CONTENT[member]: part[member]}
            file.update({old: part[new] for new, old in _FILE_INFO.items() if new in part})
            out["file"] = file
        else:
            out[member] = part[member]
        if "metadata" in part:
            if not isinstance(part["metadata"], dict):
                raise field_error(_join(path, "metadata"), "must be an object")
            out["metadata"] = part["metadata"]
        return out


class OneOf:
    """A wrapper holding exactly one of several messages, told apart in 0.3 by their `kind`."""

    def __init__(self, members: Mapping[str, Shape]) -> None:
        self.members = members
        self._by_kind = {shape.kind: (member, shape) for member, shape in members.items()}

    def to_v1(self, obj: dict[str, Any]) -> dict[str, Any]:
        member, shape = self._by_kind[obj["kind"]]
        return {member: shape.to_v1(obj)}

    def from_v1(self, value: Any, path: str) -> dict[str, Any]:
        wrapper = proto_object(value, path)
        present = [member for member in self.members if member in wrapper]
        if len(present) != 1:
            raise field_error(
                path or "result", f"must hold exactly one of {', '.join(self.members)}"
            )
        member = present[0]
        return self.members[member].from_v1(wrapper[member], _join(path, member))


PART = PartConverter()
MESSAGE = Shape(kind="message", enums={"role": ROLE}, many={"parts": PART})
ARTIFACT = Shape(many={"parts": PART})
TASK_STATUS = Shape(enums={"state": TASK_STATE}, one={"message": MESSAGE})
TASK = Shape(
    kind="task", one={"status": TASK_STATUS}, many={"artifacts": ARTIFACT, "history": MESSAGE}
)
STATUS_UPDATE = StatusUpdateShape(
    kind="status-update", one={"status": TASK_STATUS}, only_v0_3=("final",)
)
ARTIFACT_UPDATE = Shape(kind="artifact-update", one={"artifact": ARTIFACT})
SEND_MESSAGE_RESPONSE = OneOf({"task": TASK, "message": MESSAGE})
STREAM_RESPONSE = OneOf(
    {
        "task": TASK,
        "message": MESSAGE,
        "statusUpdate": STATUS_UPDATE,
        "artifactUpdate": ARTIFACT_UPDATE,
    }
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


def send_message_request(params: Any) -> MessageSendParams:
    request = validate(SendMessageRequest, proto_object(params, ""))
    message = validate(Message, MESSAGE.from_v1(request.message, "message"), "message")
    configuration = request.configuration.canonical() if request.configuration else None
    return MessageSendParams(
        message=message, configuration=configuration, metadata=request.metadata
    )


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
    return to_json(TASK.to_v1(task.to_wire()))


def send_message_result(result: Task | Message) -> bytes:
    return to_json(SEND_MESSAGE_RESPONSE.to_v1(result.to_wire()))


def stream_result(record: EventRecord) -> bytes:
    """The StreamResponse JSON of a record, converted from its 0.3 payload once per record.

    The payload, not `record.event`: a task snapshot's event is the live task, which moves on.
    """
    return converted_record(record, STREAM_ENCODING, STREAM_RESPONSE)


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
    return to_json(
        {
            "tasks": [TASK.to_v1(task.to_wire()) for task in page.tasks],
            "nextPageToken": page.next_page_token,
            "pageSize": page.page_size,
            "totalSize": page.total_size,
        }
    )


def push_config_result(config: TaskPushNotificationConfig) -> bytes:
    return ProtoTaskPushNotificationConfig.of(config).to_json()


def push_configs_result(configs: list[TaskPushNotificationConfig]) -> bytes:
    listed = [ProtoTaskPushNotificationConfig.of(config).to_wire() for config in configs]
    return to_json({"configs": listed, "nextPageToken": ""})


def empty_result(result: None) -> bytes:
    return b"{}"


def agent_card_result(card: AgentCard) -> bytes:
    return to_json(agent_card(card))


# --- the agent card --------------------------------------------------------------------------
#
# Cards are only ever written in 1.0 form here (the server serves them; nothing reads them back).

_CARD_ONLY_V0_3 = frozenset(
    {
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
        "supportedInterfaces",  # converted below
        "security",  # 1.0: securityRequirements
        "supportsAuthenticatedExtendedCard",  # 1.0: capabilities.extendedAgentCard
    }
)

# Each 0.3 security scheme `type`: its member in the proto's SecurityScheme oneof, and the
# members it renames.
_SECURITY_SCHEMES: dict[str, tuple[str, dict[str, str]]] = {
    "apiKey": ("apiKeySecurityScheme", {"in": "location"}),
    "http": ("httpAuthSecurityScheme", {}),
    "oauth2": ("oauth2SecurityScheme", {}),
    "openIdConnect": ("openIdConnectSecurityScheme", {}),
    "mutualTLS": ("mtlsSecurityScheme", {}),
}
_OAUTH_FLOWS = ("authorizationCode", "clientCredentials", "implicit", "password")

LEGACY_INTERFACE_VERSION = "0.3"
"""The protocol version of the interfaces of a card that lists only 0.3's (`url`, ...)."""


def agent_card(card: AgentCard) -> dict[str, Any]:
    """The ProtoJSON of the 1.0 AgentCard saying what `card` says.

    1.0 lists every interface in `supportedInterfaces`; a card that has none listed is a 0.3
    card, whose `url` and `additionalInterfaces` speak 0.3. The extended card capability moves
    into `capabilities`; security schemes and requirements take their proto shapes.
    """
    obj = card.to_wire()
    out = {k: v for k, v in obj.items() if k not in _CARD_ONLY_V0_3}
    capabilities = {k: v for k, v in obj["capabilities"].items() if k != "stateTransitionHistory"}
    if card.supports_authenticated_extended_card is not None:
        capabilities["extendedAgentCard"] = card.supports_authenticated_extended_card
    out["capabilities"] = capabilities
    out["supportedInterfaces"] = [_interface(interface) for interface in _interfaces(card)]
    if "securitySchemes" in obj:
        schemes = obj["securitySchemes"].items()
        out["securitySchemes"] = {name: security_scheme(scheme) for name, scheme in schemes}
    if "security" in obj:
        out["securityRequirements"] = security_requirements(obj["security"])
    out["skills"] = [_skill(skill) for skill in obj["skills"]]
    return out


def security_scheme(scheme: dict[str, Any]) -> dict[str, Any]:
    """A 0.3 security scheme (OpenAPI's, tagged by `type`) as the proto's oneof.

    The proto's OAuthFlows holds one flow: of several, the first in the proto's order is kept.
    """
    member, renamed = _SECURITY_SCHEMES[scheme["type"]]
    fields = {renamed.get(k, k): v for k, v in scheme.items() if k != "type"}
    if "flows" in fields:
        flow = next((name for name in _OAUTH_FLOWS if name in fields["flows"]), None)
        fields["flows"] = {} if flow is None else {flow: fields["flows"][flow]}
    return {member: fields}


def security_requirements(requirements: list[dict[str, list[str]]]) -> list[dict[str, Any]]:
    """0.3 security requirements (scheme name -> scopes) as the proto's SecurityRequirement."""
    return [
        {"schemes": {name: {"list": scopes} for name, scopes in requirement.items()}}
        for requirement in requirements
    ]


def _interfaces(card: AgentCard) -> list[AgentInterface]:
    if card.supported_interfaces is not None:
        return card.supported_interfaces
    main = AgentInterface(url=card.url, transport=card.preferred_transport or "JSONRPC")
    listed = {(i.url, i.transport): i for i in (main, *(card.additional_interfaces or ()))}
    return [
        i.model_copy(update={"protocol_version": LEGACY_INTERFACE_VERSION}) for i in listed.values()
    ]


def _interface(interface: AgentInterface) -> dict[str, Any]:
    out = {
        "url": interface.url,
        "protocolBinding": interface.transport,
        "protocolVersion": interface.protocol_version or LEGACY_INTERFACE_VERSION,
    }
    if interface.tenant:
        out["tenant"] = interface.tenant
    return out


def _skill(skill: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in skill.items() if k != "security"}
    if "security" in skill:
        out["securityRequirements"] = security_requirements(skill["security"])
    return out


# --- errors ----------------------------------------------------------------------------------

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


class V10Codec(JsonRpcCodec):
    """JSON-RPC as A2A 1.0 defines it."""

    version = ProtocolVersion.V1_0
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


# --- the client's direction: canonical requests out, ProtoJSON results and errors in ---------


def send_message_params(params: MessageSendParams) -> dict[str, Any]:
    """The SendMessageRequest of canonical send params."""
    out: dict[str, Any] = {"message": MESSAGE.to_v1(params.message.to_wire())}
    config = params.configuration
    if config is not None:
        push = config.push_notification_config
        configuration = SendMessageConfiguration(
            accepted_output_modes=config.accepted_output_modes,
            task_push_notification_config=(
                ProtoTaskPushNotificationConfig.of_push(push, None) if push else None
            ),
            history_length=config.history_length,
            return_immediately=config.blocking is False,
        )
        out["configuration"] = configuration.to_wire()
    if params.metadata is not None:
        out["metadata"] = params.metadata
    return out


def list_tasks_params(params: ListTasksParams) -> dict[str, Any]:
    """The ListTasksRequest of canonical list params."""
    query = params.query
    request = ListTasksRequest(
        context_id=query.context_id,
        status=TASK_STATE.to_v1(query.state.value) if query.state else None,
        page_size=query.page_size,
        page_token=query.page_token,
        history_length=params.history_length,
        status_timestamp_after=query.updated_after.isoformat() if query.updated_after else None,
        include_artifacts=params.include_artifacts,
    )
    return request.to_wire()


def task_page(result: Any) -> TaskPage:
    """A ListTasksResponse as a TaskPage."""
    page = proto_object(result, "")
    tasks = page.get("tasks", [])
    if not isinstance(tasks, list):
        raise field_error("tasks", "must be a list")
    return TaskPage(
        tasks=[
            adapters.TASK.validate_python(TASK.from_v1(task, f"tasks.{i}"))
            for i, task in enumerate(tasks)
        ],
        next_page_token=str(page.get("nextPageToken", "")),
        page_size=int(page.get("pageSize", len(tasks))),
        total_size=int(page.get("totalSize", 0)),
    )


def push_config(result: Any) -> TaskPushNotificationConfig:
    """A 1.0 TaskPushNotificationConfig as the canonical one."""
    config = validate(ProtoTaskPushNotificationConfig, proto_object(result, ""))
    return TaskPushNotificationConfig(
        task_id=config.task_id or "", push_notification_config=config.canonical()
    )


def push_configs(result: Any) -> list[TaskPushNotificationConfig]:
    configs = proto_object(result, "").get("configs", [])
    if not isinstance(configs, list):
        raise field_error("configs", "must be a list")
    return [push_config(config) for config in configs]


def _push_config_name(
    params: GetTaskPushNotificationConfigParams | DeleteTaskPushNotificationConfigParams,
) -> dict[str, Any]:
    return {"taskId": params.id, "id": params.push_notification_config_id}


def card_from_v1(result: Any) -> AgentCard:
    """The canonical card saying what a 1.0 AgentCard says (the reverse of `agent_card`).

    Its 0.3 view (`url`, `preferredTransport`) is its first interface.
    """
    card = proto_object(result, "")
    interfaces = card.get("supportedInterfaces") or [{}]
    first = proto_object(interfaces[0], "supportedInterfaces.0")
    out = {k: v for k, v in card.items() if k not in ("securityRequirements",)}
    out["url"] = first.get("url", "")
    out["preferredTransport"] = first.get("protocolBinding", first.get("transport"))
    capabilities = dict(proto_object(card.get("capabilities", {}), "capabilities"))
    if "extendedAgentCard" in capabilities:
        out["supportsAuthenticatedExtendedCard"] = capabilities.pop("extendedAgentCard")
    out["capabilities"] = capabilities
    return adapters.AGENT_CARD.validate_python(
        proto_card_security(out, "securityRequirements", card)
    )


def proto_card_security(
    out: dict[str, Any], requirements: str, card: dict[str, Any]
) -> dict[str, Any]:
    """`out` with the proto shapes of `card`'s security schemes and requirements (the latter
    under `requirements`, in the card and in each skill) turned back into 0.3's."""
    if "securitySchemes" in card:
        schemes = card["securitySchemes"].items()
        out["securitySchemes"] = {name: security_scheme_from_proto(s) for name, s in schemes}
    if requirements in card:
        out["security"] = security_requirements_from_proto(card[requirements])
    out["skills"] = [
        {
            **{k: v for k, v in skill.items() if k != requirements},
            **(
                {"security": security_requirements_from_proto(skill[requirements])}
                if requirements in skill
                else {}
            ),
        }
        for skill in card.get("skills", [])
    ]
    return out


_SCHEME_TYPES = {member: (kind, renamed) for kind, (member, renamed) in _SECURITY_SCHEMES.items()}


def security_scheme_from_proto(scheme: dict[str, Any]) -> dict[str, Any]:
    """The proto's SecurityScheme oneof as the 0.3 (OpenAPI) scheme, tagged by `type`."""
    for member, fields in scheme.items():
        if member in _SCHEME_TYPES:
            kind, renamed = _SCHEME_TYPES[member]
            back = {new: old for old, new in renamed.items()}
            return {"type": kind, **{back.get(k, k): v for k, v in fields.items()}}
    raise field_error("securitySchemes", f"unknown security scheme {sorted(scheme)}")


def security_requirements_from_proto(requirements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The proto's SecurityRequirements as 0.3's (scheme name -> scopes)."""
    return [
        {name: scopes.get("list", []) for name, scopes in requirement.get("schemes", {}).items()}
        for requirement in requirements
    ]


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


CLIENT: ClientCodec[ListTasksParams] = ClientCodec(
    version=ProtocolVersion.V1_0,
    send=ClientCall(
        "SendMessage",
        send_message_params,
        validated(adapters.SEND_RESULT, SEND_MESSAGE_RESPONSE.from_v1),
    ),
    stream=ClientCall(
        "SendStreamingMessage",
        send_message_params,
        validated(adapters.STREAM_EVENT, STREAM_RESPONSE.from_v1),
    ),
    get_task=ClientCall("GetTask", A2AModel.to_wire, validated(adapters.TASK, TASK.from_v1)),
    cancel_task=ClientCall("CancelTask", A2AModel.to_wire, validated(adapters.TASK, TASK.from_v1)),
    resubscribe=ClientCall(
        "SubscribeToTask",
        A2AModel.to_wire,
        validated(adapters.STREAM_EVENT, STREAM_RESPONSE.from_v1),
    ),
    set_push_config=ClientCall(
        "CreateTaskPushNotificationConfig",
        lambda config: ProtoTaskPushNotificationConfig.of(config).to_wire(),
        push_config,
    ),
    get_push_config=ClientCall("GetTaskPushNotificationConfig", _push_config_name, push_config),
    list_push_configs=ClientCall(
        "ListTaskPushNotificationConfigs", lambda params: {"taskId": params.id}, push_configs
    ),
    delete_push_config=ClientCall("DeleteTaskPushNotificationConfig", _push_config_name, ignored),
    get_extended_card=ClientCall("GetExtendedAgentCard", nothing, card_from_v1),
    error=error_from_object,
    list_tasks=ClientCall("ListTasks", list_tasks_params, task_page),
)
"""A2A 1.0 JSON-RPC as a client calls it (and HTTP+JSON 1.0, whose fields are the same)."""
