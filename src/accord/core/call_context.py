"""CallContext: what the service knows about the caller of one operation."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from accord.core.principal import ANONYMOUS, Principal

if TYPE_CHECKING:
    from accord.core.extension import Extension


class CallContext:
    """The transport-independent facts of one call: where it came in and its headers.

    `base_url` is the URL the call came in at; a binding may pass a function that works it
    out, called only if an operation asks (most never do). `last_event_id` is the sequence
    number of the last event a reconnecting stream saw; `tenant` the tenant the request
    names (the `/{tenant}/...` form of an HTTP+JSON route); `extensions` the agent's
    extensions this request activated, and `reply_extensions` the URIs the reply says it
    activated when an operation knows they are others (a gateway: those its upstream
    activated); `principal` who sent it, as authentication found; `streaming` whether the
    caller follows the operation's events as a stream rather than waiting for one answer;
    `result_json` the operation's result and its JSON (`to_json()`), when the operation had
    that JSON already.
    """

    __slots__ = (
        "_base_url",
        "extensions",
        "headers",
        "last_event_id",
        "principal",
        "reply_extensions",
        "result_json",
        "streaming",
        "tenant",
    )

    def __init__(
        self,
        base_url: str | Callable[[], str],
        headers: Mapping[str, str] | None = None,
        last_event_id: int | None = None,
        tenant: str | None = None,
        extensions: tuple[Extension, ...] = (),
        principal: Principal = ANONYMOUS,
        streaming: bool = False,
    ) -> None:
        self._base_url = base_url
        self.headers: Mapping[str, str] = headers if headers is not None else {}
        self.last_event_id = last_event_id
        self.tenant = tenant
        self.extensions = extensions
        self.principal = principal
        self.streaming = streaming
        self.reply_extensions: Sequence[str] | None = None
        self.result_json: tuple[object, bytes] | None = None

    @property
    def base_url(self) -> str:
        if not isinstance(self._base_url, str):
            self._base_url = self._base_url()
        return self._base_url

    def __repr__(self) -> str:
        return (
            f"CallContext(base_url={self.base_url!r}, tenant={self.tenant!r},"
            f" principal={self.principal.id!r})"
        )
