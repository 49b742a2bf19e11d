"""CallContext: what the service knows about the caller of one operation."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accord.extensions.base import Extension


class CallContext:
    """The transport-independent facts of one call: where it came in and its headers.

    `base_url` is the URL the call came in at; a binding may pass a function that works it
    out, called only if an operation asks (most never do). `last_event_id` is the sequence
    number of the last event a reconnecting stream saw; `tenant` the tenant the request
    names (the `/{tenant}/...` form of an HTTP+JSON route); `extensions` the agent's
    extensions this request activated.
    """

    __slots__ = ("_base_url", "extensions", "headers", "last_event_id", "tenant")

    def __init__(
        self,
        base_url: str | Callable[[], str],
        headers: Mapping[str, str] | None = None,
        last_event_id: int | None = None,
        tenant: str | None = None,
        extensions: tuple[Extension, ...] = (),
    ) -> None:
        self._base_url = base_url
        self.headers: Mapping[str, str] = headers if headers is not None else {}
        self.last_event_id = last_event_id
        self.tenant = tenant
        self.extensions = extensions

    @property
    def base_url(self) -> str:
        if not isinstance(self._base_url, str):
            self._base_url = self._base_url()
        return self._base_url

    def __repr__(self) -> str:
        return f"CallContext(base_url={self.base_url!r}, tenant={self.tenant!r})"
