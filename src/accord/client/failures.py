"""Turning httpx failures into A2AClientError with a one-line reason."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from accord.errors import A2AClientError, AgentUnreachable


@contextmanager
def http_errors(method: str, url: str) -> Iterator[None]:
    """Raise A2AClientError, naming the request, when httpx cannot complete it."""
    try:
        yield
    except httpx.ConnectTimeout:
        raise AgentUnreachable(f"cannot connect to {url}: timed out") from None
    except httpx.TimeoutException:
        raise A2AClientError(f"{method} {url} timed out") from None
    except httpx.ConnectError as exc:
        raise AgentUnreachable(f"cannot connect to {url}: {exc}") from None
    except (httpx.TransportError, httpx.InvalidURL) as exc:
        reason = str(exc) or type(exc).__name__
        raise A2AClientError(f"{method} {url} failed: {reason}") from None
    except ExceptionGroup as group:  # a connect in anyio's task group: a port out of range
        matched, rest = group.split((OSError, OverflowError))
        if matched is None or rest is not None:
            raise
        raise AgentUnreachable(f"cannot connect to {url}: {_first(matched)}") from None


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    found = group.exceptions[0]
    return _first(found) if isinstance(found, BaseExceptionGroup) else found
