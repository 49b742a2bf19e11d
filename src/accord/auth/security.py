"""Security: an agent's security declared once — the schemes, which combinations are required
(an OR of ANDs, with scopes), scopes per operation and a policy — for its card and its server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TypeAlias

from accord.auth.scheme import Scheme, not_empty
from accord.core import Inbound, Principal
from accord.types import SecurityScheme

Requirement: TypeAlias = Mapping[str, Sequence[str]]
"""One way to authenticate: every scheme named (AND), each with the scopes it must grant."""

RequirementLike: TypeAlias = Requirement | Sequence[str] | str
"""A requirement, or scheme names (all needed, no scopes), or one scheme's name."""

Policy: TypeAlias = Callable[[Principal, str, Inbound], bool | Awaitable[bool]]
"""A custom rule: may `principal` run the operation named (`send_message`, `get_task`, ...)
for this request? False refuses it with PermissionDenied."""


OwnerOf: TypeAlias = Callable[[Principal], str | None]
"""The owner a principal's tasks are kept under (None: the default, its scheme-qualified id):
one answer for callers of several schemes who are one person."""

TenantsOf: TypeAlias = Callable[
    [Principal], Collection[str] | Awaitable[Collection[str] | None] | None
]
"""The tenants a principal may name in a request (`/{tenant}/...`); None: any."""


class Security:
    """The security of an agent: pass it as `accord.Agent(..., security=Security(...))`.

    `schemes` are what the card's `securitySchemes` declare. `require` lists the ways to
    authenticate (any one of them will do; each names schemes that must all succeed, with the
    scopes they must grant); by default any single scheme will do. `scopes` names the scopes
    an operation needs beyond that (`{"cancel_task": ["tasks:admin"]}`; operations are
    named as in `accord.core.Operations`), and `policy` may refuse any call. `tenants` says
    which tenants a principal may name (by default: its own `tenant`, or any when it has none).
    `owner_of` says whose tasks a principal's are (by default `Principal.owner`: its id
    qualified by its scheme, `apiKey:alice`): a deployment mapping several schemes to one
    person answers the same owner for each of them (docs/security.md).
    """

    def __init__(
        self,
        *schemes: Scheme,
        require: Sequence[RequirementLike] | None = None,
        scopes: Mapping[str, Sequence[str]] | None = None,
        policy: Policy | None = None,
        tenants: TenantsOf | None = None,
        owner_of: OwnerOf | None = None,
    ) -> None:
        if not schemes:
            raise ValueError("Security needs at least one scheme")
        self.schemes = {not_empty(scheme.name, "a scheme's name"): scheme for scheme in schemes}
        if len(self.schemes) != len(schemes):
            raise ValueError("two schemes share a name: give them distinct `name`s")
        given = require if require is not None else list(self.schemes)
        if not given:
            raise ValueError("require lists no way to authenticate; [{}] lets anyone in")
        self.requirements = [self._requirement(r) for r in given]
        self.scopes = {operation: frozenset(s) for operation, s in (scopes or {}).items()}
        self.policy = policy
        self.tenants = tenants
        self.owner_of = owner_of

    def card_schemes(self) -> dict[str, SecurityScheme]:
        """The card's `securitySchemes`."""
        return {name: scheme.card_entry() for name, scheme in self.schemes.items()}

    def card_requirements(self) -> list[dict[str, list[str]]]:
        """The card's `security` (1.0: `securityRequirements`)."""
        return [{name: list(scopes) for name, scopes in r.items()} for r in self.requirements]

    def _requirement(self, given: RequirementLike) -> Requirement:
        if isinstance(given, str):
            requirement: Requirement = {given: []}
        elif isinstance(given, Mapping):
            requirement = {name: list(scopes) for name, scopes in given.items()}
        else:
            requirement = {name: [] for name in given}
        unknown = [name for name in requirement if name not in self.schemes]
        if unknown:
            raise ValueError(f"security requirement names undeclared scheme(s): {unknown}")
        return requirement
