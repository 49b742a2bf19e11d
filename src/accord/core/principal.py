"""Principal: who a request comes from, as authentication established it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller of one request.

    `id` is stable for one caller (a token's subject, an API key's owner, a certificate's
    subject); `scheme` names the card's security scheme that authenticated it (None: nobody
    did); `scopes` are what the credential grants; `tenant`, when set, is the one tenant the
    caller may use; `claims` keeps what the credential said, for policies and agents.
    """

    id: str
    scheme: str | None = None
    scopes: frozenset[str] = frozenset()
    tenant: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def authenticated(self) -> bool:
        return self.scheme is not None


ANONYMOUS = Principal("anonymous")
"""The caller of a request on an agent that asks for no credentials."""
