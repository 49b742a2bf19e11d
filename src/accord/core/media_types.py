"""Media type matching for input and output modes (`text/*`, `*/*` wildcards)."""

from __future__ import annotations

from collections.abc import Iterable


def media_type_matches(offered: str, accepted: str) -> bool:
    """Whether the media type `offered` satisfies the (possibly wildcard) `accepted` one."""
    offered_type, _, offered_sub = offered.split(";")[0].strip().lower().partition("/")
    accepted_type, _, accepted_sub = accepted.split(";")[0].strip().lower().partition("/")
    if accepted_type == "*":
        return True
    if offered_type == "*":
        return True
    if offered_type != accepted_type:
        return False
    return accepted_sub in ("*", offered_sub) or offered_sub == "*"


def any_accepted(offered: Iterable[str], accepted: Iterable[str]) -> bool:
    """Whether any offered media type satisfies any accepted one."""
    accepted = list(accepted)
    return any(media_type_matches(o, a) for o in offered for a in accepted)
