"""What guards a server of an agent: its authentication, authorization and limits, composed."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from accord.agents.agent import Agent
from accord.auth import Security, SecurityAuthenticator
from accord.server.authorization import Authorization
from accord.server.limits import Limits, RunningTasks
from accord.server.pipeline import Authenticator, Hook
from accord.server.tenants import TenantCheck

log = logging.getLogger("accord.server")


def secured(
    agent: Agent,
    authenticator: Authenticator | None,
    hooks: Sequence[Hook],
    limits: Limits | None,
    tasks: RunningTasks,
) -> tuple[Authenticator | None, list[Hook]]:
    """The authenticator and hooks a server of `agent` runs: the `limits` (by default
    `Limits()` for an agent that declares a `Security`, none for one that does not); the
    agent's authentication (unless another authenticator is given) and authorization; then
    the `hooks` given. ValueError when the card requires security that nothing enforces."""
    security = agent.security if isinstance(agent.security, Security) else None
    if security is None and authenticator is None and agent.enforce_security:
        _refuse_unenforced(agent)
    if limits is None and security is not None:
        limits = Limits()
    chain = limits.hooks(tasks) if limits is not None else []
    if security is not None:
        if authenticator is None:
            authenticator = SecurityAuthenticator(security)
        chain.append(Authorization(security, agent.card("").skills))
    if authenticator is not None:
        chain.append(TenantCheck(security.tenants if security is not None else None))
    if authenticator is not None and limits is not None:
        authenticator = limits.guarded(authenticator)
    if authenticator is None and agent.extended_card is not None:
        log.warning(
            "%s has an extended card but declares no security: anyone may read it", agent.name
        )
    return authenticator, [*chain, *hooks]


def _refuse_unenforced(agent: Agent) -> None:
    """ValueError if `agent`'s card (or one of its skills) requires credentials: the server
    would publish the requirement and serve everyone."""
    card = agent.card("")
    for where, requirements in [
        ("card", card.security),
        *((f"skill {s.id!r}", s.security) for s in card.skills),
    ]:
        if requirements and all(requirements):  # an empty requirement ({}) lets anyone in
            required = " or ".join("+".join(requirement) for requirement in requirements)
            raise ValueError(
                f"the {where} of {agent.name} requires {required} but no Security enforces it:"
                " declare it with accord.auth.Security(...) (security=Security(...)), give"
                " the app an authenticator that enforces it, or pass enforce_security=False"
                " to accord.Agent to publish it unenforced on purpose"
            )
