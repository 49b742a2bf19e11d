"""The extensions an agent says it activated, as its answers to the calls of a block list them."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar, Token

from accord.core.extension_headers import listed_extensions

_noted: ContextVar[list[str] | None] = ContextVar("accord_activated_extensions", default=None)


class activated_extensions:  # named as the function it stands for
    """The extension URIs the agent's answers to calls made within the block say they
    activated (`A2A-Extensions`, `X-A2A-Extensions`; gRPC's initial metadata), each once:

        with activated_extensions() as activated:
            task = await client.send("hello")
        print(activated)

    A stream's are noted as it starts. Calls run by other asyncio tasks are not seen."""

    __slots__ = ("_noted", "_token")

    def __init__(self) -> None:
        self._noted: list[str] = []
        self._token: Token[list[str] | None] | None = None

    def __enter__(self) -> list[str]:
        self._token = _noted.set(self._noted)
        return self._noted

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _noted.reset(self._token)


def note_activated(headers: Mapping[str, str]) -> None:
    """Note the extensions an answer's headers say it activated, within `activated_extensions`."""
    noted = _noted.get()
    if noted is not None:
        noted.extend(uri for uri in listed_extensions(headers) if uri not in noted)
