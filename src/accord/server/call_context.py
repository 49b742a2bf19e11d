"""CallContext: what the service knows about the caller of one operation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accord.extensions.base import Extension


@dataclass(frozen=True, slots=True)
class CallContext:
    """The transport-independent facts of one call: where it came in and its headers.

    `last_event_id` is the sequence number of the last event a reconnecting stream saw;
    `tenant` the tenant the request names (the `/{tenant}/...` form of an HTTP+JSON route);
    `extensions` the agent's extensions this request activated.
    """

    base_url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    last_event_id: int | None = None
    tenant: str | None = None
    extensions: tuple[Extension, ...] = ()
