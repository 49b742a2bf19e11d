"""The agent card: an agent's self-description, served for discovery."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import AliasChoices, Field

from accord.types._base import A2AModel
from accord.types.security import SecurityScheme


class TransportProtocol(StrEnum):
    """The transports an interface can speak."""

    JSONRPC = "JSONRPC"
    GRPC = "GRPC"
    HTTP_JSON = "HTTP+JSON"


class AgentProvider(A2AModel):
    """The organization behind an agent."""

    organization: str
    url: str


class AgentExtension(A2AModel):
    """A protocol extension the agent supports."""

    uri: str
    description: str | None = None
    required: bool | None = None
    params: dict[str, Any] | None = None


class AgentCapabilities(A2AModel):
    """Optional protocol features the agent supports."""

    streaming: bool | None = None
    push_notifications: bool | None = None
    state_transition_history: bool | None = None
    extensions: list[AgentExtension] | None = None


class AgentSkill(A2AModel):
    """One thing the agent can do."""

    id: str
    name: str
    description: str
    tags: list[str]
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None
    security: list[dict[str, list[str]]] | None = None


class AgentInterface(A2AModel):
    """A URL, the protocol binding spoken there and, since 1.0, the protocol version.

    `transport` is the binding under its 0.3 name; 1.0's `protocolBinding` is read as it too.
    An interface of a 0.3 card (`additional_interfaces`) has no `protocol_version`; one of
    `AgentCard.supported_interfaces` has it, and a `tenant` when requests must name one.
    """

    url: str
    transport: str = Field(
        validation_alias=AliasChoices("transport", "protocolBinding", "protocol_binding")
    )
    protocol_version: str | None = None
    tenant: str | None = None


class AgentCardSignature(A2AModel):
    """A JWS signature over the agent card."""

    protected: str
    signature: str
    header: dict[str, Any] | None = None


class AgentCard(A2AModel):
    """An agent's identity, capabilities, skills, endpoints and security requirements.

    Its interfaces are told twice, as the versions tell them: `url`, `preferred_transport`
    and `additional_interfaces` are the 0.x view (one protocol version), 1.0's
    `supported_interfaces` lists every binding and protocol version in order of preference.
    An accord server fills both from what it serves (`accord.server.interfaces`); each codec
    writes the card in its version's shape (`accord.codecs.card`).
    """

    name: str
    description: str
    url: str
    version: str
    capabilities: AgentCapabilities
    default_input_modes: list[str]
    default_output_modes: list[str]
    skills: list[AgentSkill]
    protocol_version: str | None = None
    preferred_transport: str | None = TransportProtocol.JSONRPC.value
    additional_interfaces: list[AgentInterface] | None = None
    provider: AgentProvider | None = None
    icon_url: str | None = None
    documentation_url: str | None = None
    security_schemes: dict[str, SecurityScheme] | None = None
    security: list[dict[str, list[str]]] | None = None
    supports_authenticated_extended_card: bool | None = None
    signatures: list[AgentCardSignature] | None = None
    supported_interfaces: list[AgentInterface] | None = None
