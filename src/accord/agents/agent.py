"""Agent: an executor together with the card that describes it to the world."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from accord.agents.executor import AgentExecutor
from accord.extensions.base import Extension
from accord.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentProvider,
    AgentSkill,
    SecurityScheme,
)

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.routing import BaseRoute


class Agent:
    """An A2A agent: what it does (`executor`) and how it presents itself (`card`)."""

    def __init__(
        self,
        executor: AgentExecutor,
        *,
        name: str,
        description: str = "",
        version: str = "1.0.0",
        skills: Sequence[AgentSkill] = (),
        input_modes: Sequence[str] = ("text/plain",),
        output_modes: Sequence[str] = ("text/plain",),
        streaming: bool = True,
        push_notifications: bool = False,
        extensions: Sequence[Extension | AgentExtension] = (),
        provider: AgentProvider | None = None,
        documentation_url: str | None = None,
        icon_url: str | None = None,
        security_schemes: dict[str, SecurityScheme] | None = None,
        security: list[dict[str, list[str]]] | None = None,
        extended_card: AgentCard | None = None,
        routes: Sequence[BaseRoute] = (),
    ) -> None:
        self.executor = executor
        self.routes = list(routes)
        """Starlette routes of the agent's own, served beside the A2A routes (e.g. files)."""
        self.extended_card = extended_card
        self.extensions = [e for e in extensions if isinstance(e, Extension)]
        """The extensions this agent implements (card-only entries are not listed here)."""
        self._card = AgentCard(
            name=name,
            description=description or name,
            url="",
            version=version,
            capabilities=AgentCapabilities(
                streaming=streaming,
                push_notifications=push_notifications,
                state_transition_history=False,
                extensions=[e.card_entry() if isinstance(e, Extension) else e for e in extensions]
                or None,
            ),
            default_input_modes=list(input_modes),
            default_output_modes=list(output_modes),
            skills=list(skills),
            provider=provider,
            documentation_url=documentation_url,
            icon_url=icon_url,
            security_schemes=security_schemes,
            security=security,
            supports_authenticated_extended_card=extended_card is not None or None,
        )

    @property
    def name(self) -> str:
        return self._card.name

    def card(self, url: str) -> AgentCard:
        """The public agent card, with the JSON-RPC endpoint at `url`."""
        return self._card.model_copy(update={"url": url})

    def app(self, **options: Any) -> Starlette:
        """An ASGI app serving this agent (see `accord.server.create_app` for options)."""
        from accord.server import create_app

        return create_app(self, **options)

    def serve(self, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serve this agent with uvicorn until interrupted (with the default `HttpLimits`)."""
        import uvicorn

        from accord.server.http_limits import HttpLimits

        limits = HttpLimits().uvicorn_options()
        uvicorn.run(self.app(**options), host=host, port=port, log_level="warning", **limits)

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, executor={type(self.executor).__name__})"
