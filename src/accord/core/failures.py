"""What a remote caller is told of an unexpected exception: a reference to the logged error."""

from __future__ import annotations

import logging
import secrets


def report_failure(
    log: logging.Logger, summary: str, exc: BaseException, *, debug: bool = False, where: str = ""
) -> str:
    """Log `exc` with its traceback under a new reference id, and return the message a remote
    caller gets: `summary` and the reference, never the exception's text (which may hold
    internal details), unless `debug` (a development server) asks for it."""
    reference = secrets.token_hex(6)
    log.error(
        "%s%s [reference %s]", summary, f" ({where})" if where else "", reference, exc_info=exc
    )
    detail = f": {type(exc).__name__}: {_text(exc)}" if debug else ""
    return f"{summary}{detail} (reference {reference})"


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose __str__ fails says nothing more
        return "<no message>"
