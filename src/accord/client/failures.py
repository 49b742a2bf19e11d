"""Turning httpx failures into A2AClientError with a one-line reason."""

from __future__ import annotations

import httpx

from accord.core.translated_errors import TranslatedErrors
from accord.errors import A2AClientError, AgentUnreachable


class http_errors(TranslatedErrors):  # named as the function it stands for
    """Raise A2AClientError, naming the request, when httpx cannot complete it."""

    __slots__ = ("method", "url")

    def __init__(self, method: str, url: str) -> None:
        self.method = method
        self.url = url

    def translated(self, exc: BaseException) -> BaseException | None:
        method, url = self.method, self.url
        if isinstance(exc, httpx.ConnectTimeout):
            return AgentUnreachable(f"cannot connect to {url}: timed out")
        if isinstance(exc, httpx.TimeoutException):
            return A2AClientError(f"{method} {url} timed out")
        if isinstance(exc, httpx.ConnectError):
            return AgentUnreachable(f"cannot connect to {url}: {exc}")
        if isinstance(exc, (httpx.TransportError, httpx.InvalidURL)):
            reason = str(exc) or type(exc).__name__
            return A2AClientError(f"{method} {url} failed: {reason}")
        if isinstance(exc, ExceptionGroup):  # a connect in anyio's task group: a port out of range
            matched, rest = exc.split((OSError, OverflowError))
            if matched is not None and rest is None:
                return AgentUnreachable(f"cannot connect to {url}: {_first(matched)}")
        return None


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    found = group.exceptions[0]
    return _first(found) if isinstance(found, BaseExceptionGroup) else found
