"""SecurityAuthenticator: checks a request against the card's security requirements."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from accord.auth.scheme import InvalidCredential
from accord.auth.security import Requirement, Security
from accord.core import ANONYMOUS, Inbound, Principal
from accord.errors import PermissionDenied, Unauthenticated

Outcome = Principal | InvalidCredential | None


class SecurityAuthenticator:
    """The pipeline's `Authenticator` for a `Security`: the caller is whoever satisfies one of
    its requirements (every scheme named there authenticated the request and granted the
    scopes named). Otherwise: Unauthenticated when credentials are missing or wrong (with a
    challenge per scheme), PermissionDenied when valid ones lack a scope."""

    def __init__(self, security: Security) -> None:
        self.security = security

    async def authenticate(self, inbound: Inbound) -> Principal:
        outcomes: dict[str, Outcome] = {}
        lacking: list[str] = []
        for requirement in self.security.requirements:
            principals: list[Principal] = []
            for name, scopes in requirement.items():
                if name not in outcomes:
                    outcomes[name] = await self._outcome(name, inbound)
                outcome = outcomes[name]
                if not isinstance(outcome, Principal):
                    break
                missing = sorted(set(scopes) - outcome.scopes)
                if missing:
                    lacking.append(f"{name}: {' '.join(missing)}")
                    break
                principals.append(outcome)
            else:
                return self._owned(combined(principals))
        raise self._refusal(outcomes, lacking)

    def _owned(self, principal: Principal) -> Principal:
        """`principal`, kept under the owner `Security(owner_of=...)` answers for it, if any."""
        owner_of = self.security.owner_of
        owner = owner_of(principal) if owner_of is not None else None
        return principal if owner is None else replace(principal, owned_as=owner)

    async def _outcome(self, name: str, inbound: Inbound) -> Outcome:
        try:
            return await self.security.schemes[name].authenticate(inbound)
        except InvalidCredential as exc:
            return exc

    def _refusal(self, outcomes: dict[str, Outcome], lacking: list[str]) -> Exception:
        schemes = self.security.schemes
        invalid = {n: o for n, o in outcomes.items() if isinstance(o, InvalidCredential)}
        if invalid:
            challenges = [
                scheme.challenge(str(invalid[n]) if n in invalid else None)
                for n, scheme in schemes.items()
            ]
            reasons = "; ".join(f"{name}: {error}" for name, error in invalid.items())
            return Unauthenticated(f"invalid credentials ({reasons})", challenges=challenges)
        if lacking:
            return PermissionDenied(
                "the credentials lack the scope(s) this agent requires: " + "; ".join(lacking)
            )
        return Unauthenticated(
            f"this agent requires authentication: {wanted(self.security.requirements)}"
            " (see WWW-Authenticate and the agent card's securitySchemes)",
            challenges=[scheme.challenge() for scheme in schemes.values()],
        )


def wanted(requirements: Iterable[Requirement]) -> str:
    """The requirements in words: `apiKey, or oauth2 (scopes: read) and mtls`."""
    ways = []
    for requirement in requirements:
        parts = [
            f"{name} (scopes: {' '.join(scopes)})" if scopes else name
            for name, scopes in requirement.items()
        ]
        ways.append(" and ".join(parts))
    return ", or ".join(ways)


def combined(principals: list[Principal]) -> Principal:
    """One caller from the principals several schemes authenticated together (the first
    one's id, tenant and owned_as; every scheme's scopes and claims)."""
    if not principals:
        return ANONYMOUS
    if len(principals) == 1:
        return principals[0]
    first = principals[0]
    claims: dict[str, object] = {}
    for principal in reversed(principals):
        claims.update(principal.claims)
    return Principal(
        first.id,
        scheme="+".join(p.scheme or "" for p in principals),
        scopes=frozenset().union(*(p.scopes for p in principals)),
        tenant=first.tenant,
        claims=claims,
        owned_as=first.owned_as,
    )
