"""Turning httpx failures into A2AClientError with a one-line reason."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from accord.errors import A2AClientError


@contextmanager
def http_errors(method: str, url: str) -> Iterator[None]:
    """Raise A2AClientError, naming the request, when httpx cannot complete it."""
    try:
        yield
    except httpx.TimeoutException:
        raise A2AClientError(f"{method} {url} timed out") from None
    except httpx.ConnectError as exc:
        raise A2AClientError(f"cannot connect to {url}: {exc}") from None
    except (httpx.TransportError, httpx.InvalidURL) as exc:
        reason = str(exc) or type(exc).__name__
        raise A2AClientError(f"{method} {url} failed: {reason}") from None
