"""Turning httpx and pydantic failures into A2AClientError with a one-line reason."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from pydantic import ValidationError

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


def describe_validation_error(exc: ValidationError) -> str:
    """The first problem pydantic found, as `field: message`, and how many more there are."""
    problems = exc.errors(include_url=False, include_input=False)
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"])
    text = f"{where}: {first['msg']}" if where else first["msg"]
    more = len(problems) - 1
    return text + (f" (and {more} more)" if more else "")
