"""CallContext: what the service knows about the caller of one operation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class CallContext:
    """The transport-independent facts of one call: where it came in and its headers."""

    base_url: str
    headers: Mapping[str, str] = field(default_factory=dict)
