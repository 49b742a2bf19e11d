"""Scheme: one security scheme of the card, how it reads and checks a request's credential."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeAlias

from accord.core import Inbound, Principal
from accord.types import SecurityScheme

Verified: TypeAlias = Principal | str | None
"""What a verifier callback answers: the caller (a Principal, or its id), or None to refuse."""

Verifier: TypeAlias = Callable[..., Verified | Awaitable[Verified]]


class InvalidCredential(Exception):
    """A request carries a credential of a scheme, and it does not authenticate anyone."""


class Scheme(ABC):
    """A security scheme an agent declares in its card and enforces.

    `name` is its key in the card's `securitySchemes` (and in security requirements).
    `authenticate` answers the caller the request's credential of this scheme stands for,
    None when the request carries no such credential, and raises InvalidCredential when it
    carries one that is wrong (expired, badly signed, unknown).
    """

    name: str
    description: str | None = None

    @abstractmethod
    def card_entry(self) -> SecurityScheme:
        """The scheme as the card declares it."""

    @abstractmethod
    def challenge(self, error: str | None = None) -> str:
        """The `WWW-Authenticate` challenge naming this scheme (with `error` for a refused
        credential)."""

    @abstractmethod
    async def authenticate(self, inbound: Inbound) -> Principal | None: ...

    def principal(self, verified: Verified) -> Principal:
        """The caller a verifier named, authenticated by this scheme; InvalidCredential for
        None."""
        if not verified:
            raise InvalidCredential(f"the {self.name} credential is not valid")
        if isinstance(verified, str):
            return Principal(verified, scheme=self.name)
        return replace(verified, scheme=verified.scheme or self.name)


async def call_verifier(verify: Verifier, *args: str) -> Verified:
    """`verify(*args)`, awaited when it is a coroutine function or returns an awaitable."""
    result = verify(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def not_empty(value: str, what: str) -> str:
    """`value`, or a ValueError naming `what` when it is empty: a setting that would otherwise
    fail only when a request arrives (or let in a caller no one meant)."""
    if not value:
        raise ValueError(f"{what} is empty")
    return value


def quoted(value: str) -> str:
    """`value` as an HTTP quoted-string."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
