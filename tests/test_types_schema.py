"""Every definition of the A2A 0.3.0 JSON schema, built with accord.types and checked against it."""

from __future__ import annotations

from enum import Enum
from functools import cache
from typing import Annotated, Any, get_args, get_origin

import pytest
from pydantic import TypeAdapter, ValidationError

from accord import types
from accord.codecs import v0_3
from accord.types import (
    A2AErrorObject,
    A2AModel,
    A2ARequest,
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    Artifact,
    AuthorizationCodeOAuthFlow,
    CancelTaskRequest,
    CancelTaskSuccessResponse,
    ClientCredentialsOAuthFlow,
    DataPart,
    DeleteTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigSuccessResponse,
    FileBase,
    FilePart,
    FileWithBytes,
    FileWithUri,
    GetAuthenticatedExtendedCardRequest,
    GetAuthenticatedExtendedCardSuccessResponse,
    GetTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigSuccessResponse,
    GetTaskRequest,
    GetTaskSuccessResponse,
    HTTPAuthSecurityScheme,
    ImplicitOAuthFlow,
    JSONParseError,
    JSONRPCError,
    JSONRPCErrorResponse,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCSuccessResponse,
    ListTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigSuccessResponse,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    MutualTLSSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    PartBase,
    PasswordOAuthFlow,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    Role,
    SecuritySchemeBase,
    SendMessageRequest,
    SendMessageSuccessResponse,
    SendStreamingMessageRequest,
    SendStreamingMessageSuccessResponse,
    SetTaskPushNotificationConfigRequest,
    SetTaskPushNotificationConfigSuccessResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskResubscriptionRequest,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    TransportProtocol,
)
from conftest import SchemaErrors
from spec_files import load_schema

SCHEMA = load_schema()
DEFINITIONS: dict[str, Any] = SCHEMA["definitions"]

# Schema definitions accord names differently.
ACCORD_NAMES = {"A2AError": "A2AErrorObject"}

TASK_ID = "3f36680c-7f37-4a5f-945e-d78981fafd36"
CONTEXT_ID = "c295ea44-7543-4f78-b524-7a38915ad6e4"
WEBHOOK_ID = "webhook-ops-1"

# --- Parts and messages -------------------------------------------------------------------------

TEXT_PART = TextPart(
    text="Book me a flight from JFK to LHR on October 10th.", metadata={"language": "en"}
)
FILE_WITH_BYTES = FileWithBytes(
    bytes="iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
    mime_type="image/png",
    name="passport-scan.png",
)
FILE_WITH_URI = FileWithUri(
    uri="https://storage.example.com/itineraries/XYZ123.pdf",
    mime_type="application/pdf",
    name="itinerary.pdf",
)
FILE_PART = FilePart(file=FILE_WITH_BYTES, metadata={"source": "camera"})
DATA_PART = DataPart(
    data={"from": "JFK", "to": "LHR", "departure": "2025-10-10", "passengers": 2},
    metadata={"schema": "https://schemas.example.com/flight-search/v1"},
)
USER_MESSAGE = Message(
    message_id="0db1d6c4-3976-40ed-b9b8-0043ea7a03d3",
    role=Role.USER,
    parts=[TEXT_PART, FILE_PART, DATA_PART],
    context_id=CONTEXT_ID,
    task_id=TASK_ID,
    reference_task_ids=["43667960-d455-4453-b0cf-1bae4955270d"],
    extensions=["https://extensions.example.com/travel/v1"],
    metadata={"client": "web"},
)
AGENT_MESSAGE = Message(
    message_id="c2e1b2dd-f200-4b04-bc22-1b0c65a1aad2",
    role=Role.AGENT,
    parts=[TextPart(text="Which cabin class would you like?")],
    context_id=CONTEXT_ID,
    task_id=TASK_ID,
)

# --- Tasks and events ---------------------------------------------------------------------------

TASK_STATUS = TaskStatus(
    state=TaskState.INPUT_REQUIRED, message=AGENT_MESSAGE, timestamp="2025-10-01T09:30:00.000Z"
)
ARTIFACT = Artifact(
    artifact_id="9b6934dd-37e3-4eb1-8766-962efaab63a1",
    parts=[DATA_PART, FilePart(file=FILE_WITH_URI)],
    name="FlightItinerary",
    description="The booked itinerary, as data and as a printable PDF.",
    extensions=["https://extensions.example.com/travel/v1"],
    metadata={"confirmationId": "XYZ123"},
)
TASK = Task(
    id=TASK_ID,
    context_id=CONTEXT_ID,
    status=TaskStatus(state=TaskState.COMPLETED, timestamp="2025-10-01T09:31:12.250Z"),
    artifacts=[ARTIFACT],
    history=[USER_MESSAGE, AGENT_MESSAGE],
    metadata={"priority": "high"},
)
STATUS_UPDATE = TaskStatusUpdateEvent(
    task_id=TASK_ID,
    context_id=CONTEXT_ID,
    status=TASK_STATUS,
    final=False,
    metadata={"sequence": 3},
)
ARTIFACT_UPDATE = TaskArtifactUpdateEvent(
    task_id=TASK_ID,
    context_id=CONTEXT_ID,
    artifact=ARTIFACT,
    append=True,
    last_chunk=True,
    metadata={"sequence": 4},
)

# --- Push notifications and method parameters ---------------------------------------------------

PUSH_AUTHENTICATION = PushNotificationAuthenticationInfo(
    schemes=["Bearer"], credentials="eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl"
)
PUSH_CONFIG = PushNotificationConfig(
    url="https://client.example.com/webhooks/a2a",
    id=WEBHOOK_ID,
    token="secure-client-token-for-task",
    authentication=PUSH_AUTHENTICATION,
)
TASK_PUSH_CONFIG = TaskPushNotificationConfig(task_id=TASK_ID, push_notification_config=PUSH_CONFIG)
SEND_CONFIGURATION = MessageSendConfiguration(
    accepted_output_modes=["text/plain", "application/json"],
    blocking=False,
    history_length=10,
    push_notification_config=PUSH_CONFIG,
)
SEND_PARAMS = MessageSendParams(
    message=USER_MESSAGE, configuration=SEND_CONFIGURATION, metadata={"trace": "abc123"}
)
TASK_ID_PARAMS = TaskIdParams(id=TASK_ID, metadata={"reason": "user closed the chat"})
TASK_QUERY_PARAMS = TaskQueryParams(id=TASK_ID, history_length=5, metadata={"trace": "abc123"})
GET_PUSH_PARAMS = GetTaskPushNotificationConfigParams(
    id=TASK_ID, push_notification_config_id=WEBHOOK_ID, metadata={"trace": "abc123"}
)
LIST_PUSH_PARAMS = ListTaskPushNotificationConfigParams(id=TASK_ID, metadata={"trace": "abc123"})
DELETE_PUSH_PARAMS = DeleteTaskPushNotificationConfigParams(
    id=TASK_ID, push_notification_config_id=WEBHOOK_ID, metadata={"trace": "abc123"}
)

# --- Security schemes and the agent card --------------------------------------------------------

SCOPES = {"flights:read": "Search flights", "flights:book": "Book flights"}
AUTHORIZATION_CODE_FLOW = AuthorizationCodeOAuthFlow(
    authorization_url="https://auth.example.com/oauth2/authorize",
    token_url="https://auth.example.com/oauth2/token",
    refresh_url="https://auth.example.com/oauth2/refresh",
    scopes=SCOPES,
)
CLIENT_CREDENTIALS_FLOW = ClientCredentialsOAuthFlow(
    token_url="https://auth.example.com/oauth2/token",
    refresh_url="https://auth.example.com/oauth2/refresh",
    scopes=SCOPES,
)
IMPLICIT_FLOW = ImplicitOAuthFlow(
    authorization_url="https://auth.example.com/oauth2/authorize",
    refresh_url="https://auth.example.com/oauth2/refresh",
    scopes=SCOPES,
)
PASSWORD_FLOW = PasswordOAuthFlow(
    token_url="https://auth.example.com/oauth2/token",
    refresh_url="https://auth.example.com/oauth2/refresh",
    scopes=SCOPES,
)
OAUTH_FLOWS = OAuthFlows(
    authorization_code=AUTHORIZATION_CODE_FLOW,
    client_credentials=CLIENT_CREDENTIALS_FLOW,
    implicit=IMPLICIT_FLOW,
    password=PASSWORD_FLOW,
)
API_KEY_SCHEME = APIKeySecurityScheme(name="X-API-Key", in_="header")
HTTP_SCHEME = HTTPAuthSecurityScheme(scheme="bearer", bearer_format="JWT")
OAUTH2_SCHEME = OAuth2SecurityScheme(
    flows=OAUTH_FLOWS,
    oauth2_metadata_url="https://auth.example.com/.well-known/oauth-authorization-server",
)
OPEN_ID_SCHEME = OpenIdConnectSecurityScheme(
    open_id_connect_url="https://auth.example.com/.well-known/openid-configuration"
)
MUTUAL_TLS_SCHEME = MutualTLSSecurityScheme()

EXTENSION = AgentExtension(
    uri="https://extensions.example.com/travel/v1",
    description="Structured flight search and booking payloads.",
    required=False,
    params={"currencies": ["USD", "EUR", "GBP"]},
)
CAPABILITIES = AgentCapabilities(
    streaming=True, push_notifications=True, state_transition_history=True, extensions=[EXTENSION]
)
PROVIDER = AgentProvider(organization="Example Travel Inc.", url="https://travel.example.com")
SKILL = AgentSkill(
    id="book-flight",
    name="Book flights",
    description="Searches and books flights, returning a printable itinerary.",
    tags=["travel", "flights", "booking"],
    examples=["Book me a flight from JFK to LHR on October 10th."],
    input_modes=["text/plain", "application/json"],
    output_modes=["application/json", "application/pdf"],
    security=[{"oauth2": ["flights:book"]}],
)
INTERFACE = AgentInterface(url="https://travel.example.com/a2a/v1", transport="JSONRPC")
SIGNATURE = AgentCardSignature(
    protected="eyJhbGciOiJFUzI1NiIsImtpZCI6ImtleS0xIn0",
    signature="QW5vdGhlciBzaWduYXR1cmUgdmFsdWU",
    header={"kid": "key-1"},
)
AGENT_CARD = AgentCard(
    name="Travel Agent",
    description="Plans and books business travel.",
    url="https://travel.example.com/a2a/v1",
    version="2.1.0",
    protocol_version="0.3.0",
    preferred_transport=TransportProtocol.JSONRPC.value,
    additional_interfaces=[
        INTERFACE,
        AgentInterface(url="https://travel.example.com/grpc", transport="GRPC"),
        AgentInterface(url="https://travel.example.com/rest/v1", transport="HTTP+JSON"),
    ],
    provider=PROVIDER,
    icon_url="https://travel.example.com/icon.png",
    documentation_url="https://travel.example.com/docs/a2a",
    capabilities=CAPABILITIES,
    security_schemes={
        "apiKey": API_KEY_SCHEME,
        "bearer": HTTP_SCHEME,
        "oauth2": OAUTH2_SCHEME,
        "oidc": OPEN_ID_SCHEME,
        "mtls": MUTUAL_TLS_SCHEME,
    },
    security=[{"oauth2": ["flights:read"]}, {"apiKey": []}],
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain", "application/json"],
    skills=[SKILL],
    supports_authenticated_extended_card=True,
    signatures=[SIGNATURE],
)

# --- JSON-RPC -----------------------------------------------------------------------------------

A2A_ERRORS = {
    error.__name__: error(data={"requestId": "req-042", "detail": f"{error.__name__} example"})
    for error in get_args(A2AErrorObject)
}
ERROR_RESPONSE = JSONRPCErrorResponse(id="req-042", error=A2A_ERRORS["TaskNotFoundError"])
CANCELED_TASK = TASK.model_copy(
    update={"status": TaskStatus(state=TaskState.CANCELED, timestamp="2025-10-01T09:32:00.000Z")}
)

# One or more instances per class definition; the first ("full") fills every optional field.
CLASS_SAMPLES: dict[str, dict[str, Any]] = {
    "TextPart": {"full": TEXT_PART},
    "FileBase": {"full": FileBase(mime_type="text/csv", name="fares.csv")},
    "FileWithBytes": {"full": FILE_WITH_BYTES},
    "FileWithUri": {"full": FILE_WITH_URI},
    "FilePart": {"full": FILE_PART, "uri": FilePart(file=FILE_WITH_URI)},
    "DataPart": {"full": DATA_PART},
    "PartBase": {"full": PartBase(metadata={"confidence": 0.92})},
    "Message": {"full": USER_MESSAGE, "agent-reply": AGENT_MESSAGE},
    "TaskStatus": {"full": TASK_STATUS, "state-only": TaskStatus(state=TaskState.WORKING)},
    "Artifact": {"full": ARTIFACT},
    "Task": {"full": TASK, "canceled": CANCELED_TASK},
    "TaskStatusUpdateEvent": {"full": STATUS_UPDATE},
    "TaskArtifactUpdateEvent": {"full": ARTIFACT_UPDATE},
    "PushNotificationAuthenticationInfo": {"full": PUSH_AUTHENTICATION},
    "PushNotificationConfig": {"full": PUSH_CONFIG},
    "TaskPushNotificationConfig": {"full": TASK_PUSH_CONFIG},
    "MessageSendConfiguration": {"full": SEND_CONFIGURATION},
    "MessageSendParams": {"full": SEND_PARAMS},
    "TaskIdParams": {"full": TASK_ID_PARAMS},
    "TaskQueryParams": {"full": TASK_QUERY_PARAMS},
    "GetTaskPushNotificationConfigParams": {"full": GET_PUSH_PARAMS},
    "ListTaskPushNotificationConfigParams": {"full": LIST_PUSH_PARAMS},
    "DeleteTaskPushNotificationConfigParams": {"full": DELETE_PUSH_PARAMS},
    "AuthorizationCodeOAuthFlow": {"full": AUTHORIZATION_CODE_FLOW},
    "ClientCredentialsOAuthFlow": {"full": CLIENT_CREDENTIALS_FLOW},
    "ImplicitOAuthFlow": {"full": IMPLICIT_FLOW},
    "PasswordOAuthFlow": {"full": PASSWORD_FLOW},
    "OAuthFlows": {"full": OAUTH_FLOWS},
    "SecuritySchemeBase": {"full": SecuritySchemeBase()},
    "APIKeySecurityScheme": {
        "full": API_KEY_SCHEME,
        "query": APIKeySecurityScheme(name="api_key", in_="query"),
        "cookie": APIKeySecurityScheme(name="session", in_="cookie"),
    },
    "HTTPAuthSecurityScheme": {
        "full": HTTP_SCHEME,
        "basic": HTTPAuthSecurityScheme(scheme="basic"),
    },
    "OAuth2SecurityScheme": {"full": OAUTH2_SCHEME},
    "OpenIdConnectSecurityScheme": {"full": OPEN_ID_SCHEME},
    "MutualTLSSecurityScheme": {"full": MUTUAL_TLS_SCHEME},
    "AgentProvider": {"full": PROVIDER},
    "AgentExtension": {"full": EXTENSION},
    "AgentCapabilities": {"full": CAPABILITIES},
    "AgentSkill": {"full": SKILL},
    "AgentInterface": {"full": INTERFACE},
    "AgentCardSignature": {"full": SIGNATURE},
    "AgentCard": {
        "full": AGENT_CARD,
        "minimal": AgentCard(
            name="Echo Agent",
            description="Repeats what it is told.",
            url="https://echo.example.com/a2a",
            version="1.0.0",
            capabilities=AgentCapabilities(),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            skills=[],
        ),
    },
    "JSONRPCMessage": {"full": JSONRPCMessage(id="req-001")},
    "JSONRPCRequest": {
        "full": JSONRPCRequest(id=1, method="tasks/get", params={"id": TASK_ID}),
        "no-params": JSONRPCRequest(id=2, method="agent/getAuthenticatedExtendedCard"),
    },
    "JSONRPCSuccessResponse": {"full": JSONRPCSuccessResponse(id=1, result={"id": TASK_ID})},
    "JSONRPCError": {
        "full": JSONRPCError(
            code=-32050, message="Flight inventory unavailable", data={"retryAfter": 30}
        )
    },
    **{name: {"full": error} for name, error in A2A_ERRORS.items()},
    "JSONRPCErrorResponse": {
        "full": ERROR_RESPONSE,
        "null-id": JSONRPCErrorResponse(id=None, error=JSONParseError()),
        "custom-error": JSONRPCErrorResponse(
            id=7, error=JSONRPCError(code=-32050, message="Flight inventory unavailable")
        ),
    },
    "SendMessageRequest": {"full": SendMessageRequest(id="req-001", params=SEND_PARAMS)},
    "SendStreamingMessageRequest": {
        "full": SendStreamingMessageRequest(id="req-002", params=SEND_PARAMS)
    },
    "GetTaskRequest": {"full": GetTaskRequest(id=3, params=TASK_QUERY_PARAMS)},
    "CancelTaskRequest": {"full": CancelTaskRequest(id=4, params=TASK_ID_PARAMS)},
    "TaskResubscriptionRequest": {"full": TaskResubscriptionRequest(id=5, params=TASK_ID_PARAMS)},
    "SetTaskPushNotificationConfigRequest": {
        "full": SetTaskPushNotificationConfigRequest(id=6, params=TASK_PUSH_CONFIG)
    },
    "GetTaskPushNotificationConfigRequest": {
        "full": GetTaskPushNotificationConfigRequest(id=7, params=GET_PUSH_PARAMS),
        "task-id-params": GetTaskPushNotificationConfigRequest(id=8, params=TASK_ID_PARAMS),
    },
    "ListTaskPushNotificationConfigRequest": {
        "full": ListTaskPushNotificationConfigRequest(id=9, params=LIST_PUSH_PARAMS)
    },
    "DeleteTaskPushNotificationConfigRequest": {
        "full": DeleteTaskPushNotificationConfigRequest(id=10, params=DELETE_PUSH_PARAMS)
    },
    "GetAuthenticatedExtendedCardRequest": {"full": GetAuthenticatedExtendedCardRequest(id=11)},
    "SendMessageSuccessResponse": {
        "full": SendMessageSuccessResponse(id="req-001", result=TASK),
        "message": SendMessageSuccessResponse(id="req-001", result=AGENT_MESSAGE),
    },
    "SendStreamingMessageSuccessResponse": {
        "full": SendStreamingMessageSuccessResponse(id="req-002", result=TASK),
        "message": SendStreamingMessageSuccessResponse(id="req-002", result=AGENT_MESSAGE),
        "status-update": SendStreamingMessageSuccessResponse(id="req-002", result=STATUS_UPDATE),
        "artifact-update": SendStreamingMessageSuccessResponse(
            id="req-002", result=ARTIFACT_UPDATE
        ),
    },
    "GetTaskSuccessResponse": {"full": GetTaskSuccessResponse(id=3, result=TASK)},
    "CancelTaskSuccessResponse": {"full": CancelTaskSuccessResponse(id=4, result=CANCELED_TASK)},
    "SetTaskPushNotificationConfigSuccessResponse": {
        "full": SetTaskPushNotificationConfigSuccessResponse(id=6, result=TASK_PUSH_CONFIG)
    },
    "GetTaskPushNotificationConfigSuccessResponse": {
        "full": GetTaskPushNotificationConfigSuccessResponse(id=7, result=TASK_PUSH_CONFIG)
    },
    "ListTaskPushNotificationConfigSuccessResponse": {
        "full": ListTaskPushNotificationConfigSuccessResponse(
            id=9,
            result=[
                TASK_PUSH_CONFIG,
                TaskPushNotificationConfig(
                    task_id=TASK_ID,
                    push_notification_config=PushNotificationConfig(
                        url="https://backup.example.com/webhooks/a2a", id="webhook-backup"
                    ),
                ),
            ],
        ),
        "empty": ListTaskPushNotificationConfigSuccessResponse(id=9, result=[]),
    },
    "DeleteTaskPushNotificationConfigSuccessResponse": {
        "full": DeleteTaskPushNotificationConfigSuccessResponse(id=10)
    },
    "GetAuthenticatedExtendedCardSuccessResponse": {
        "full": GetAuthenticatedExtendedCardSuccessResponse(id=11, result=AGENT_CARD)
    },
}

# accord reads a status update without `final` as not final (the schema requires the member).
DEFAULTED_REQUIRED = {("TaskStatusUpdateEvent", "final"): False}
# Defaults the 0.3 codec writes, not the canonical model (a card's version is the codec's).
WRITTEN_BY_THE_CODEC = {("AgentCard", "protocolVersion")}

REQUEST_DEFINITIONS = frozenset(request.__name__ for request in get_args(A2ARequest))


def accord_type(definition: str) -> Any:
    """The accord class, enum or type alias for a schema definition (None when missing)."""
    return getattr(types, ACCORD_NAMES.get(definition, definition), None)


def is_model(target: Any) -> bool:
    return isinstance(target, type) and issubclass(target, A2AModel)


def is_enum(target: Any) -> bool:
    return isinstance(target, type) and issubclass(target, Enum)


def union_members(target: Any) -> tuple[type[A2AModel], ...]:
    """The classes of a union alias (plain or `Annotated` with a discriminator)."""
    if get_origin(target) is Annotated:
        target = get_args(target)[0]
    return get_args(target)


def samples(definition: str) -> dict[str, Any]:
    """Labelled instances of a definition's accord type: one per member for unions and enums."""
    target = accord_type(definition)
    if target is None:
        return {}
    if is_enum(target):
        return {member.value: member for member in target}
    if is_model(target):
        return CLASS_SAMPLES.get(definition, {})
    names = [member.__name__ for member in union_members(target)]
    return {name: CLASS_SAMPLES[name]["full"] for name in names if name in CLASS_SAMPLES}


@cache
def adapter(definition: str) -> TypeAdapter[Any]:
    return TypeAdapter(accord_type(definition))


def to_wire(definition: str, instance: Any) -> Any:
    """The wire form: a card as the 0.3 codec writes it (naming 0.3.0 when it names no
    version), `to_wire()` for other models, the alias's `TypeAdapter` otherwise."""
    if isinstance(instance, AgentCard):
        return v0_3.agent_card(instance)
    if is_model(accord_type(definition)):
        return instance.to_wire()
    return adapter(definition).dump_python(
        instance, mode="json", by_alias=True, exclude_none=True, warnings="error"
    )


def object_definitions() -> list[str]:
    """The definitions that are JSON objects with properties of their own (accord classes)."""
    return [name for name, spec in sorted(DEFINITIONS.items()) if "properties" in spec]


def wire_names(model: type[A2AModel]) -> dict[str, str]:
    """Wire member name -> attribute name of a model's fields."""
    return {field.alias or name: name for name, field in model.model_fields.items()}


SAMPLE_CASES = [
    pytest.param(definition, label, id=f"{definition}-{label}")
    for definition in sorted(DEFINITIONS)
    for label in samples(definition) or ["missing"]
]
REQUIRED_CASES = [
    pytest.param(definition, prop, id=f"{definition}-{prop}")
    for definition in object_definitions()
    for prop in DEFINITIONS[definition].get("required", [])
    # Requests defaulting `id` to null is a known bug, pinned by test_requests_require_an_id.
    if not (definition in REQUEST_DEFINITIONS and prop == "id")
]


@pytest.mark.parametrize(("definition", "label"), SAMPLE_CASES)
def test_sample_validates_against_schema(
    definition: str, label: str, schema_errors: SchemaErrors
) -> None:
    target = accord_type(definition)
    assert target is not None, f"accord.types has no type for schema definition {definition}"
    assert label != "missing", f"no sample instance for schema definition {definition}"
    instance = samples(definition)[label]
    if is_model(target):
        assert type(instance) is target

    wire = to_wire(definition, instance)

    assert schema_errors(definition, wire) == []
    reread = adapter(definition).validate_python(wire)
    assert to_wire(definition, reread) == wire
    if isinstance(wire, dict):  # unknown members are ignored, not kept
        with_unknown = {**wire, "futureMember": {"added": "in a later protocol version"}}
        assert to_wire(definition, adapter(definition).validate_python(with_unknown)) == wire


def test_every_sample_names_a_schema_definition() -> None:
    assert set(CLASS_SAMPLES) - set(DEFINITIONS) == set()


@pytest.mark.parametrize(
    "definition", [name for name, spec in sorted(DEFINITIONS.items()) if "anyOf" in spec]
)
def test_union_members_match_schema(definition: str) -> None:
    expected = {ref["$ref"].rsplit("/", 1)[-1] for ref in DEFINITIONS[definition]["anyOf"]}
    members = {member.__name__ for member in union_members(accord_type(definition))}
    assert members == expected


@pytest.mark.parametrize(
    ("enum", "values"),
    [
        pytest.param(TaskState, DEFINITIONS["TaskState"]["enum"], id="TaskState"),
        pytest.param(
            TransportProtocol, DEFINITIONS["TransportProtocol"]["enum"], id="TransportProtocol"
        ),
        pytest.param(Role, DEFINITIONS["Message"]["properties"]["role"]["enum"], id="Message.role"),
    ],
)
def test_enum_values_match_schema(enum: type[Enum], values: list[str]) -> None:
    assert sorted(member.value for member in enum) == sorted(values)


@pytest.mark.parametrize("definition", object_definitions())
def test_full_sample_covers_every_property(definition: str) -> None:
    expected = set(DEFINITIONS[definition]["properties"])
    if issubclass(accord_type(definition), SecuritySchemeBase):
        # Known bug, pinned by test_security_schemes_keep_their_description.
        expected.discard("description")
    full = CLASS_SAMPLES[definition]["full"]
    assert set(full.to_wire()) == expected


@pytest.mark.parametrize("definition", object_definitions())
def test_constants_and_defaults_match_schema(definition: str) -> None:
    fields = accord_type(definition).model_fields
    names = wire_names(accord_type(definition))
    for prop, spec in DEFINITIONS[definition]["properties"].items():
        for keyword in ("const", "default"):
            if keyword not in spec:
                continue
            if (definition, prop) in WRITTEN_BY_THE_CODEC:
                minimal = to_wire(definition, CLASS_SAMPLES[definition]["minimal"])
                assert minimal[prop] == spec[keyword], f"{prop} {keyword}"
            else:
                assert fields[names[prop]].default == spec[keyword], f"{prop} {keyword}"


@pytest.mark.parametrize(("definition", "prop"), REQUIRED_CASES)
def test_required_property(definition: str, prop: str, schema_errors: SchemaErrors) -> None:
    """Without a required member accord fails, or fills in what the schema itself implies."""
    model = accord_type(definition)
    wire = CLASS_SAMPLES[definition]["full"].to_wire()
    del wire[prop]
    spec = DEFINITIONS[definition]["properties"][prop]
    nullable = not schema_errors(definition, {**wire, prop: None})

    if (definition, prop) in DEFAULTED_REQUIRED:
        assert model.model_validate(wire).to_wire()[prop] == DEFAULTED_REQUIRED[definition, prop]
    elif "const" in spec or "default" in spec:
        filled = to_wire(definition, model.model_validate(wire))
        assert filled[prop] == spec.get("const", spec.get("default"))
    elif nullable:  # e.g. a response `id`: accord may leave it null
        try:
            filled = model.model_validate(wire)
        except ValidationError:
            return
        assert filled.to_wire()[prop] is None
    else:
        with pytest.raises(ValidationError) as failure:
            model.model_validate(wire)
        reported = {error["loc"][0] for error in failure.value.errors() if error["loc"]}
        assert reported & {prop, wire_names(model)[prop]}


def test_attributes_are_snake_case() -> None:
    card = AgentCard.model_validate(AGENT_CARD.to_wire())
    assert card.default_input_modes == ["text/plain"]
    assert card.supports_authenticated_extended_card is True
    assert card.capabilities.push_notifications is True
    assert card.capabilities.state_transition_history is True
    assert card.skills[0].input_modes == ["text/plain", "application/json"]
    assert card.additional_interfaces is not None
    assert card.additional_interfaces[1].transport == TransportProtocol.GRPC
    assert card.security_schemes is not None
    oauth2 = card.security_schemes["oauth2"]
    assert isinstance(oauth2, OAuth2SecurityScheme)
    assert oauth2.oauth2_metadata_url is not None
    assert oauth2.flows.authorization_code is not None
    assert oauth2.flows.authorization_code.token_url == "https://auth.example.com/oauth2/token"

    task = Task.model_validate(TASK.to_wire())
    assert task.context_id == CONTEXT_ID
    assert task.history is not None
    assert task.history[0].message_id == USER_MESSAGE.message_id
    assert task.history[0].reference_task_ids == USER_MESSAGE.reference_task_ids

    # Python names are accepted on input too, but never written to the wire.
    params = TaskQueryParams.model_validate({"id": TASK_ID, "history_length": 2})
    assert params.history_length == 2
    assert params.to_wire() == {"id": TASK_ID, "historyLength": 2}


def test_unknown_fields_are_ignored() -> None:
    wire = TASK.to_wire()
    wire["priorityClass"] = "gold"
    wire["status"]["estimatedCompletion"] = "2025-10-01T10:00:00Z"
    wire["history"][0]["parts"][0]["language"] = "en"

    task = Task.model_validate(wire)

    assert not hasattr(task, "priorityClass")
    assert not hasattr(task, "priority_class")
    assert task.model_extra is None
    assert task.to_wire() == TASK.to_wire()


@pytest.mark.parametrize(
    ("definition", "wire"),
    [
        pytest.param("Part", {"kind": "image", "text": "hi"}, id="Part-unknown-kind"),
        pytest.param("TextPart", {"kind": "data", "text": "hi"}, id="TextPart-kind-data"),
        pytest.param(
            "Message",
            {"kind": "task", "messageId": "m1", "role": "user", "parts": []},
            id="Message-kind-task",
        ),
        pytest.param(
            "Task",
            {"kind": "message", "id": "t1", "contextId": "c1", "status": {"state": "working"}},
            id="Task-kind-message",
        ),
        pytest.param(
            "SendStreamingMessageSuccessResponse",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"kind": "progress", "taskId": "t1", "contextId": "c1"},
            },
            id="SendStreamingMessageSuccessResponse-kind-progress",
        ),
        pytest.param(
            "SecurityScheme", {"type": "basic", "scheme": "basic"}, id="SecurityScheme-type-basic"
        ),
    ],
)
def test_wrong_kind_is_rejected(definition: str, wire: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        adapter(definition).validate_python(wire)


@pytest.mark.parametrize("location", ["cookie", "header", "query"])
def test_api_key_scheme_round_trips_in(location: str) -> None:
    wire = {"type": "apiKey", "name": "X-API-Key", "in": location}

    scheme = APIKeySecurityScheme.model_validate(wire)

    assert scheme.in_ == location
    assert scheme.to_wire() == wire
    assert APIKeySecurityScheme(name="X-API-Key", in_=location).to_wire() == wire
    with pytest.raises(ValidationError):
        APIKeySecurityScheme.model_validate({**wire, "in": "body"})


def test_security_schemes_keep_their_description() -> None:
    scheme_adapter = adapter("SecurityScheme")
    for scheme in samples("SecurityScheme").values():
        wire = {**to_wire("SecurityScheme", scheme), "description": "How clients authenticate."}
        assert to_wire("SecurityScheme", scheme_adapter.validate_python(wire)) == wire


def test_requests_require_an_id(schema_errors: SchemaErrors) -> None:
    accepted = []
    for name in sorted(REQUEST_DEFINITIONS):
        wire = CLASS_SAMPLES[name]["full"].to_wire()
        del wire["id"]
        try:
            written = accord_type(name).model_validate(wire).to_wire()
        except ValidationError:
            continue
        accepted.append((name, written["id"], schema_errors(name, written)))
    assert accepted == []


def test_utc_now_is_the_current_time_in_milliseconds_with_z() -> None:
    import re
    from datetime import UTC, datetime

    from accord.types import utc_now

    before = datetime.now(UTC).replace(microsecond=0)
    stamps = [utc_now() for _ in range(1000)]
    after = datetime.now(UTC)
    for stamp in stamps:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)
        assert before <= datetime.fromisoformat(stamp) <= after
    assert stamps == sorted(stamps)
