"""The gateway's card: what the upstream's card says it does, served as the gateway's own."""

from __future__ import annotations

from accord.agents import Agent, AgentExecutor
from accord.agents.agent import DeclaresSecurity
from accord.types import AgentCard, AgentSkill


def gateway_agent(
    executor: AgentExecutor,
    upstream: AgentCard,
    *,
    name: str | None = None,
    security: DeclaresSecurity | None = None,
    push_notifications: bool = True,
) -> Agent:
    """An `Agent` presenting the upstream's name, skills, modes, provider and extensions; its
    interfaces, security and capabilities (streaming, push) are the gateway's own, which the
    server adds when it serves the card."""
    return Agent(
        executor,
        name=name or upstream.name,
        description=upstream.description,
        version=upstream.version,
        skills=[own_skill(skill) for skill in upstream.skills],
        input_modes=upstream.default_input_modes,
        output_modes=upstream.default_output_modes,
        streaming=True,
        push_notifications=push_notifications,
        extensions=upstream.capabilities.extensions or (),
        provider=upstream.provider,
        documentation_url=upstream.documentation_url,
        icon_url=upstream.icon_url,
        security=security,
    )


def own_skill(skill: AgentSkill) -> AgentSkill:
    """The skill without the upstream's security requirements: they name the upstream's
    schemes, which callers of the gateway never present."""
    return skill.model_copy(update={"security": None}) if skill.security else skill
