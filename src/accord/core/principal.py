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
    did; STORED_OWNER: no request did, see `of_owner`); `scopes` are what the credential
    grants; `tenant`, when set, is the one tenant the caller may use; `claims` keeps what the
    credential said, for policies and agents.
    """

    id: str
    scheme: str | None = None
    scopes: frozenset[str] = frozenset()
    tenant: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.id:  # the empty owner is the anonymous caller's
            raise ValueError("a principal needs a non-empty id")

    @classmethod
    def of_owner(cls, owner: str) -> Principal:
        """Who a task's stored owner stands for when no request is at hand (a task run again
        after its replica died): ANONYMOUS for the anonymous owner, else the owner's id under
        the scheme STORED_OWNER, with no scopes or claims (the store keeps none). Its `owner`
        is `owner` again, "anonymous" included, which a principal without scheme would lose."""
        if owner == ANONYMOUS_OWNER:
            return ANONYMOUS
        return cls(owner, scheme=STORED_OWNER)

    @property
    def authenticated(self) -> bool:
        """Whether a request's credentials established this caller."""
        return self.scheme is not None and self.scheme != STORED_OWNER

    @property
    def owner(self) -> str:
        """What the tasks, contexts and push configs this caller creates are stored under:
        its id, or ANONYMOUS_OWNER for the anonymous caller (so an authenticated caller whose
        id happens to be "anonymous" shares nothing with unauthenticated ones)."""
        if self.scheme is None and self.id == _ANONYMOUS_ID:
            return ANONYMOUS_OWNER
        return self.id


_ANONYMOUS_ID = "anonymous"

STORED_OWNER = "accord:stored-owner"
"""The `scheme` of a principal rebuilt from a task's stored owner (`Principal.of_owner`): no
request authenticated it, so it is not `authenticated`."""

ANONYMOUS_OWNER = ""
"""The owner of what anonymous callers create (and of every task stored before owners were):
shared by all anonymous callers, so an agent without security works as it always did."""

ANONYMOUS = Principal(_ANONYMOUS_ID)
"""The caller of a request on an agent that asks for no credentials."""
