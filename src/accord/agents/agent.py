"""Agent: an executor together with the card that describes it to the world."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol

from accord.agents.executor import AgentExecutor
from accord.core.extension import Extension
from accord.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentProvider,
    AgentSkill,
    SecurityScheme,
)

DEFAULT_PORT = 8000
"""Where `Agent.serve` and `accord serve` listen unless told otherwise."""
APP_FACTORY = "accord.server:create_app"
"""What `Agent.app` hands the agent to; named rather than imported, since the server sits
above the agents (tests/test_layers.py checks the name)."""
SERVER = "accord.cli.serve:serve_agent"
"""What `Agent.serve` hands the agent to (`accord serve`'s), named for the same reason."""

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.routing import BaseRoute


class DeclaresSecurity(Protocol):
    """A security declaration (`accord.auth.Security`): what it puts in the card."""

    def card_schemes(self) -> dict[str, SecurityScheme]: ...

    def card_requirements(self) -> list[dict[str, list[str]]]: ...


class Agent:
    """An A2A agent: what it does (`executor`) and how it presents itself (`card`)."""

    card_revision = 0
    """Changes whenever the card does (a gateway's follows its upstreams): a server serving
    the card renders it again when it changed."""
    card_changed: float | None = None
    """When the card last changed (POSIX time); None: not since the server started."""

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
        security: DeclaresSecurity | list[dict[str, list[str]]] | None = None,
        enforce_security: bool = True,
        extended_card: AgentCard | None = None,
        routes: Sequence[BaseRoute] = (),
    ) -> None:
        self.executor = executor
        self.routes = list(routes)
        """Starlette routes of the agent's own, served beside the A2A routes (e.g. files)."""
        self.extended_card = extended_card
        self.security = None if security is None or isinstance(security, list) else security
        """The security the server enforces (`accord.auth.Security`), if declared: its schemes
        and requirements are the card's. A plain list of requirements only goes in the card,
        and a server refuses to start with it (`accord.create_app`) unless something else
        enforces it (an `authenticator` given to the app) or `enforce_security` is False."""
        self.enforce_security = enforce_security
        """Whether a server of this agent must enforce the security its card requires."""
        requirements = security if isinstance(security, list) else None
        if self.security is not None:
            security_schemes = {**(security_schemes or {}), **self.security.card_schemes()}
            requirements = self.security.card_requirements()
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
            security=requirements,
            supports_authenticated_extended_card=extended_card is not None or None,
        )

    @property
    def name(self) -> str:
        return self._card.name

    def card(self, url: str) -> AgentCard:
        """The public agent card, with the JSON-RPC endpoint at `url`."""
        return self._card.model_copy(update={"url": url})

    def change_card(self, card: AgentCard) -> None:
        """Present `card` from now on (its `url` is the server's): servers serve it anew."""
        self._card = card
        self.card_changed = time.time()
        self.card_revision += 1

    def app(self, **options: Any) -> Starlette:
        """An ASGI app serving this agent (`options`: those of `accord.server.create_app`, its
        `config` among them)."""
        app: Starlette = entry_point(APP_FACTORY)(self, **options)
        return app

    def serve(
        self,
        host: str = "127.0.0.1",
        port: int | None = None,
        *,
        store: str | None = None,
        log_level: str = "warning",
        config: Any = None,
        workers: int = 1,
        **options: Any,
    ) -> None:
        """Serve this agent until interrupted, as `accord serve module:agent` does.

        The port is `port`, else the `ACCORD_PORT` variable's, else 8000. Tasks are kept in
        the store at the URL `store`: by default a SQLite file of its own under `./.accord`
        (`default_store_url`: named after the agent), `memory`
        to keep none. It says on stderr where it serves and where tasks are kept, and ends
        with one line if the port is taken. `config` (an `accord.ServerConfig`) and
        `options` (its settings by name, set over `config`'s) say how it is served; as with
        `accord serve`, the agent answers only requests for its loopback names and `host` at
        `port` unless `allowed_hosts` names others or `public_url` says where it is reached.
        `workers` above 1 serves it on that many processes, as `accord serve --workers` does
        (the agent is handed to them as it is, so it may be made in a script).
        """
        if port is None:
            port = int(os.environ.get("ACCORD_PORT", DEFAULT_PORT))
        entry_point(SERVER)(
            self,
            host,
            port,
            store=store,
            log_level=log_level,
            config=config,
            workers=workers,
            options=options,
        )

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, executor={type(self.executor).__name__})"


def entry_point(name: str) -> Callable[..., Any]:
    """The function `module:attribute` names, its module imported now."""
    module, _, attribute = name.partition(":")
    found: Callable[..., Any] = getattr(import_module(module), attribute)
    return found
