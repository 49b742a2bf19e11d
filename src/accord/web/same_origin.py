"""Whether a browser says a request comes from another origin (`Origin`, `Sec-Fetch-Site`)."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

SAME = ("same-origin", "none")
"""`Sec-Fetch-Site` values of a request made by the page itself, or by the user (`none`)."""


def foreign_origin(headers: Mapping[str, str]) -> str | None:
    """Why a request comes from another site or origin, by what the browser says (its
    `Sec-Fetch-Site`, its `Origin` against the `Host` it names); None when it does not say so
    (a script sends neither)."""
    site = headers.get("sec-fetch-site")
    if site is not None and site not in SAME:
        return f"refused: sent from another site (Sec-Fetch-Site: {site})"
    origin = headers.get("origin")
    if origin is None:
        return None
    try:
        netloc = urlsplit(origin).netloc
    except ValueError:
        netloc = ""
    if not netloc or netloc != headers.get("host", ""):
        return f"refused: sent from another origin ({origin[:100]})"
    return None
