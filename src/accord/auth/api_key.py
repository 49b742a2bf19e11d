"""ApiKey: a key in a header, query or cookie, checked against known keys or a callback."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from http.cookies import CookieError, SimpleCookie
from typing import Literal

from accord.auth.scheme import (
    InvalidCredential,
    Scheme,
    Verifier,
    call_verifier,
    not_empty,
    quoted,
)
from accord.core import Inbound, Principal
from accord.types import APIKeySecurityScheme, SecurityScheme

Location = Literal["header", "query", "cookie"]


class ApiKey(Scheme):
    """An API key sent as the header, query parameter or cookie `parameter`.

    Give the keys you issued as `keys` (key -> the id of the caller holding it), or a
    `verify(key)` callback answering the caller (a Principal or its id) or None. gRPC has no
    query parameters or cookies: there a key declared in either is read from the metadata
    entry of the same name.
    """

    def __init__(
        self,
        keys: Mapping[str, str] | None = None,
        *,
        verify: Verifier | None = None,
        parameter: str = "X-API-Key",
        location: Location = "header",
        name: str = "apiKey",
        description: str | None = None,
    ) -> None:
        if (keys is None) == (verify is None):
            raise ValueError("give ApiKey either the issued keys or a verify callback")
        self.name = name
        self.description = description
        self.parameter = not_empty(parameter, "ApiKey's parameter (where the key is sent)")
        self.location: Location = location
        self._verify = verify
        # Keys are looked up by digest, so the lookup's timing says nothing about the keys.
        self._owners = {_digest(key): owner for key, owner in _checked(keys or {})}

    def card_entry(self) -> SecurityScheme:
        return APIKeySecurityScheme.model_validate(
            {"name": self.parameter, "in": self.location, "description": self.description}
        )

    def challenge(self, error: str | None = None) -> str:
        return f"ApiKey {self.location}={quoted(self.parameter)}"

    async def authenticate(self, inbound: Inbound) -> Principal | None:
        key = self.read(inbound)
        if key is None:
            return None
        if self._verify is not None:
            return self.principal(await call_verifier(self._verify, key))
        owner = self._owners.get(_digest(key))
        if owner is None:
            raise InvalidCredential(f"the API key in {self.parameter} is not valid")
        return Principal(owner, scheme=self.name)

    def read(self, inbound: Inbound) -> str | None:
        """The key the request carries, if any."""
        if self.location == "header" or inbound.binding == "GRPC":
            return inbound.headers.get(self.parameter) or None
        if self.location == "query":
            return inbound.query.get(self.parameter) or None
        return _cookie(inbound.headers.get("cookie"), self.parameter)


def _checked(keys: Mapping[str, str]) -> list[tuple[str, str]]:
    """The issued keys, each with the caller holding it; a ValueError (naming no key: they
    are secrets) for an empty key or an empty caller id."""
    if any(not key for key in keys):
        raise ValueError("ApiKey keys include an empty key: a request can never send one")
    unowned = sum(1 for owner in keys.values() if not owner)
    if unowned:
        raise ValueError(
            f"ApiKey keys map {unowned} key(s) to an empty caller id:"
            " give each key the id of the caller holding it"
        )
    return list(keys.items())


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def _cookie(header: str | None, name: str) -> str | None:
    if not header:
        return None
    cookies: SimpleCookie = SimpleCookie()
    try:
        cookies.load(header)
    except CookieError:
        raise InvalidCredential("the Cookie header cannot be read") from None
    morsel = cookies.get(name)
    return morsel.value if morsel is not None and morsel.value else None
