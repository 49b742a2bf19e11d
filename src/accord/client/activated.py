"""The extensions an agent says it activated, as its answers to the calls of a block list them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from accord.core.extension_headers import listed_extensions

_noted: ContextVar[list[str] | None] = ContextVar("accord_activated_extensions", default=None)


@contextmanager
def activated_extensions() -> Iterator[list[str]]:
    """The extension URIs the agent's answers to calls made within the block say they
    activated (`A2A-Extensions`, `X-A2A-Extensions`; gRPC's initial metadata), each once:

        with activated_extensions() as activated:
            task = await client.send("hello")
        print(activated)

    A stream's are noted as it starts. Calls run by other asyncio tasks are not seen."""
    noted: list[str] = []
    token = _noted.set(noted)
    try:
        yield noted
    finally:
        _noted.reset(token)


def note_activated(headers: Mapping[str, str]) -> None:
    """Note the extensions an answer's headers say it activated, within `activated_extensions`."""
    noted = _noted.get()
    if noted is not None:
        noted.extend(uri for uri in listed_extensions(headers) if uri not in noted)
