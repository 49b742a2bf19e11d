"""Futures whose outcome may go unawaited: marked seen, so a failure is not logged as lost."""

from __future__ import annotations

from asyncio import Future
from typing import Any


def mark_seen(done: Future[Any]) -> None:
    """A done callback: retrieve the outcome of `done` (an error stays for whoever awaits it)."""
    if not done.cancelled():
        done.exception()
