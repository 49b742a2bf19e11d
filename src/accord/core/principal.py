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
    credential said, for policies and agents. `owned_as`, when set, is the owner its tasks
    are kept under instead of the scheme-qualified id (see `owner`): a deployment that knows
    two schemes' callers to be one person gives both the same (`Security(owner_of=...)`).
    """

    id: str
    scheme: str | None = None
    scopes: frozenset[str] = frozenset()
    tenant: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)
    owned_as: str | None = None

    def __post_init__(self) -> None:
        if not self.id:  # the empty owner is the anonymous caller's
            raise ValueError("a principal needs a non-empty id")
        if self.owned_as is not None and not self.owned_as:
            raise ValueError("a principal's owned_as must not be empty (the anonymous owner)")

    @classmethod
    def of_owner(cls, owner: str) -> Principal:
        """Who a task's stored owner stands for when no request is at hand (a task run again
        after its replica died): ANONYMOUS for the anonymous owner, else the id the owner
        names (`alice` for `apiKey:alice`) under the scheme STORED_OWNER, with no scopes or
        claims (the store keeps none). Its `owner` is `owner` again, "anonymous" included."""
        if owner == ANONYMOUS_OWNER:
            return ANONYMOUS
        _, qualified, named = owner.partition(_SCHEME_END)
        return cls(named if qualified and named else owner, scheme=STORED_OWNER, owned_as=owner)

    @property
    def authenticated(self) -> bool:
        """Whether a request's credentials established this caller."""
        return self.scheme is not None and self.scheme != STORED_OWNER

    @property
    def owner(self) -> str:
        """What the tasks, contexts and push configs this caller creates are stored under:
        `owned_as` when set; else its id qualified by its scheme (`apiKey:alice`, so that a
        token whose subject is `alice` shares nothing with the API key of `alice`); its id
        alone when no scheme is named; ANONYMOUS_OWNER for the anonymous caller (so an
        authenticated caller whose id happens to be "anonymous" shares nothing with
        unauthenticated ones)."""
        if self.owned_as is not None:
            return self.owned_as
        if self.scheme is None:
            return ANONYMOUS_OWNER if self.id == _ANONYMOUS_ID else self.id
        return qualified_owner(self.scheme, self.id)


def qualified_owner(scheme: str, id: str) -> str:
    """The owner a caller `id` authenticated by `scheme` has by default: `scheme:id`, the
    scheme's `%`, `:` and `(` percent-encoded so that no two (scheme, id) pairs make one owner
    and none is an `unqualified_owner`."""
    escaped = scheme.replace("%", "%25").replace(_SCHEME_END, "%3A").replace("(", "%28")
    return f"{escaped}{_SCHEME_END}{id}"


def unqualified_owner(id: str) -> str:
    """The owner a task created by the caller `id` has when it was stored before owners named
    a scheme (SQL schema version 8 moved them here): `(unqualified):id`, which no scheme's
    owner can be (a scheme's `(` would be encoded). Nobody's by default; a deployment hands
    those tasks back by having `Security(owner_of=...)` answer it for the scheme that made
    them."""
    return f"{UNQUALIFIED}{_SCHEME_END}{id}"


_ANONYMOUS_ID = "anonymous"
_SCHEME_END = ":"

UNQUALIFIED = "(unqualified)"
"""What owners stored before they named a scheme begin with (`unqualified_owner`)."""

STORED_OWNER = "accord:stored-owner"
"""The `scheme` of a principal rebuilt from a task's stored owner (`Principal.of_owner`): no
request authenticated it, so it is not `authenticated`."""

ANONYMOUS_OWNER = ""
"""The owner of what anonymous callers create (and of every task stored before owners were):
shared by all anonymous callers, so an agent without security works as it always did."""

ANONYMOUS = Principal(_ANONYMOUS_ID)
"""The caller of a request on an agent that asks for no credentials."""
