"""Authorization as a pipeline hook: scopes per operation and per skill, and a custom policy."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from accord.agents.agent import Agent
from accord.auth import Security, SecurityAuthenticator
from accord.codecs.base import Method
from accord.core import Principal
from accord.errors import PermissionDenied
from accord.server.pipeline import Authenticator, Call, Hook, Proceed
from accord.types import AgentSkill

MESSAGE_OPERATIONS = frozenset({"send_message", "stream_message"})
# 0.1's methods adapt the operations rather than naming one.
_ADAPTED = {
    "tasks/send": "send_message",
    "tasks/sendSubscribe": "stream_message",
    "tasks/resubscribe": "resubscribe",
}


class Authorization:
    """Refuses (PermissionDenied) a call whose principal lacks the scopes its operation needs
    (`Security.scopes`), a message when every skill of the agent declares security
    requirements and the principal meets none of them, or a call the policy refuses."""

    def __init__(self, security: Security, skills: Sequence[AgentSkill] = ()) -> None:
        self.security = security
        self.guarded_skills = (
            list(skills) if skills and all(skill.security for skill in skills) else []
        )
        self._names: dict[int, str] = {}

    async def __call__(self, call: Call, proceed: Proceed) -> Any:
        operation = self.operation(call)
        principal = call.context.principal
        missing = self.security.scopes.get(operation, frozenset()) - principal.scopes
        if missing:
            raise PermissionDenied(f"{operation} needs the scope(s) {' '.join(sorted(missing))}")
        if operation in MESSAGE_OPERATIONS and not self.skill_open_to(principal):
            raise PermissionDenied(
                "none of this agent's skills is open to these credentials: "
                + "; ".join(f"{s.id} needs {s.security}" for s in self.guarded_skills)
            )
        policy = self.security.policy
        if policy is not None:
            allowed = policy(principal, operation, call.inbound)
            if inspect.isawaitable(allowed):
                allowed = await allowed
            if not allowed:
                raise PermissionDenied(f"{principal.id} may not {operation} here")
        return await proceed()

    def skill_open_to(self, principal: Principal) -> bool:
        """Whether some skill is open to `principal` (true when a skill declares no security)."""
        guarded = self.guarded_skills
        return not guarded or any(skill_allowed(skill, principal) for skill in guarded)

    def operation(self, call: Call) -> str:
        """The name of the operation `call` runs (as in `accord.core.Operations`)."""
        method = call.target.method
        name = self._names.get(id(method))
        if name is None:
            name = self._names[id(method)] = operation_name(method) or _ADAPTED.get(
                call.inbound.method, call.inbound.method
            )
        return name


def skill_allowed(skill: AgentSkill, principal: Principal) -> bool:
    """Whether `principal` meets one of the skill's security requirements (all its schemes
    authenticated the caller, with the scopes named); a skill without any is open."""
    if not skill.security:
        return True
    schemes = set((principal.scheme or "").split("+"))
    return any(
        set(requirement) <= schemes
        and all(set(scopes) <= principal.scopes for scopes in requirement.values())
        for requirement in skill.security
    )


def operation_name(method: Method) -> str | None:
    """The `Operations` member `method` runs, found by letting it pick from a recorder."""
    try:
        picked = method.operation(_Recorder())  # type: ignore[arg-type]
    except Exception:
        return None
    while isinstance(picked, partial):
        picked = picked.func
    return picked.name if isinstance(picked, _Picked) else None


class _Picked:
    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("a recorded operation is never run")


class _Recorder:
    def __getattr__(self, name: str) -> Callable[..., None]:
        return _Picked(name)


def secured(
    agent: Agent, authenticator: Authenticator | None, hooks: Sequence[Hook]
) -> tuple[Authenticator | None, list[Hook]]:
    """The authenticator and hooks a server of `agent` runs: those given, and when the agent
    declares a `Security`, its authentication (unless another authenticator is given) and
    authorization first."""
    security = agent.security
    if not isinstance(security, Security):
        return authenticator, list(hooks)
    if authenticator is None:
        authenticator = SecurityAuthenticator(security)
    skills = agent.card("").skills
    return authenticator, [Authorization(security, skills), *hooks]
