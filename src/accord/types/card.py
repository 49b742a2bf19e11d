"""The agent card: an agent's self-description, served for discovery."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

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
    """A URL and the transport spoken there."""

    url: str
    transport: str


class AgentCardSignature(A2AModel):
    """A JWS signature over the agent card."""

    protected: str
    signature: str
    header: dict[str, Any] | None = None


class AgentCard(A2AModel):
    """An agent's identity, capabilities, skills, endpoints and security requirements."""

    name: str
    description: str
    url: str
    version: str
    capabilities: AgentCapabilities
    default_input_modes: list[str]
    default_output_modes: list[str]
    skills: list[AgentSkill]
    protocol_version: str = "0.3.0"
    preferred_transport: str | None = TransportProtocol.JSONRPC.value
    additional_interfaces: list[AgentInterface] | None = None
    provider: AgentProvider | None = None
    icon_url: str | None = None
    documentation_url: str | None = None
    security_schemes: dict[str, SecurityScheme] | None = None
    security: list[dict[str, list[str]]] | None = None
    supports_authenticated_extended_card: bool | None = None
    signatures: list[AgentCardSignature] | None = None
