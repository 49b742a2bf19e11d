"""Authorization as a pipeline hook: scopes per operation and per skill, and a custom policy."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from accord.auth import Security
from accord.core import Principal
from accord.errors import PermissionDenied
from accord.server.operation_names import MESSAGE_OPERATIONS, operation_of
from accord.server.pipeline import Call, Proceed
from accord.types import AgentSkill


class Authorization:
    """Refuses (PermissionDenied) a call whose principal lacks the scopes its operation needs
    (`Security.scopes`), a message when every skill of the agent declares security
    requirements and the principal meets none of them, or a call the policy refuses."""

    def __init__(self, security: Security, skills: Sequence[AgentSkill] = ()) -> None:
        self.security = security
        self.guarded_skills = (
            list(skills) if skills and all(skill.security for skill in skills) else []
        )

    async def __call__(self, call: Call, proceed: Proceed) -> Any:
        operation = operation_of(call)
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
