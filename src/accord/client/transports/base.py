"""Transport: one binding speaking one protocol version to one interface, on canonical objects."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, TypeVar

import httpx
import pydantic_core
from httpx_sse import ServerSentEvent
from pydantic import ValidationError

from accord.client.event_stream import IdentifiedEvents as IdentifiedEvents
from accord.client.keepalive import Answer
from accord.codecs import VERSION_HEADER, ProtocolVersion
from accord.codecs.base import ClientCall, ClientCodec
from accord.codecs.field_problems import describe_validation_error
from accord.core.outbound import inject
from accord.errors import (
    A2AClientError,
    A2AError,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
)
from accord.types import AgentInterface, StreamEvent

P = TypeVar("P")
R = TypeVar("R")

JSON = "application/json"
EVENT_STREAM = "text/event-stream"
LAST_EVENT_ID = "Last-Event-ID"


class Transport(ABC):
    """Calls the operations of one interface: `codec` says the version's wire shapes.

    Every request names the version in `A2A-Version`, unless it is 0.3 (what naming none means).
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        interface: AgentInterface,
        codec: ClientCodec[Any],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.interface = interface
        self.codec = codec
        self._http = http
        self._headers = dict(headers or {})
        if codec.version is not ProtocolVersion.V0_3:  # what a request naming none gets
            self._headers[VERSION_HEADER] = codec.version.value

    @property
    def url(self) -> str:
        return self.interface.url

    @abstractmethod
    async def call(self, call: ClientCall[P, R], params: P) -> R:
        """Run `call` with `params`; its decoded result, or the A2AError the server sent."""

    @abstractmethod
    def stream(
        self, call: ClientCall[P, StreamEvent], params: P, last_event_id: int | None = None
    ) -> IdentifiedEvents:
        """Run a streaming `call`; each event with the stream's last event id so far.

        `last_event_id` goes out as the `Last-Event-ID` header.
        """

    async def aclose(self) -> None:
        """Release what the transport holds of its own (the HTTP client is the Client's)."""

    def _request_headers(self, *, accept: str, last_event_id: int | None = None) -> dict[str, str]:
        headers = {**self._headers, "Content-Type": JSON, "Accept": accept}
        if last_event_id is not None:
            headers[LAST_EVENT_ID] = str(last_event_id)
        inject(headers)  # the trace context of the moment, when traced
        return headers


@lru_cache(maxsize=256)
def parsed_url(url: str) -> httpx.URL:
    """`url` parsed as httpx would on every request (tens of µs of CPU each), parsed once."""
    return httpx.URL(url)


def decoded(decode: Callable[[Any], R], value: Any) -> R:
    """`decode(value)`, or A2AClientError when the agent's answer is not what it should be."""
    try:
        return decode(value)
    except ValidationError as exc:
        reason = describe_validation_error(exc)
        raise A2AClientError(f"the agent sent an invalid result: {reason}") from None
    except A2AError as exc:  # a codec naming the bad field
        raise A2AClientError(f"the agent sent an invalid result: {exc.message}") from None


def is_event_stream(response: httpx.Response) -> bool:
    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    return response.is_success and content_type == EVENT_STREAM


def json_body(content: bytes) -> Any:
    """The JSON of a body, or None when it is not JSON: read by pydantic_core (half the CPU
    of the json module), and by the json module what pydantic_core refuses and it may read
    (UTF-16 and UTF-32, a byte order mark, a lone surrogate escaped), the same values."""
    try:
        return pydantic_core.from_json(content)
    except ValueError:
        pass
    try:
        return json.loads(content)
    except ValueError:
        return None


def event_id(sse: ServerSentEvent) -> int | None:
    """An SSE last event id as accord servers send it (a sequence number); None otherwise."""
    return int(sse.id) if sse.id.isdigit() else None


def event_document(sse: ServerSentEvent, url: str) -> Any:
    try:
        return json.loads(sse.data)
    except ValueError:
        raise A2AClientError(f"an event from {url} is not JSON: {sse.data[:80]!r}") from None


def waiting_as_told(error: Exception, answer: Answer) -> Exception:
    """`error`, a RateLimited one waiting as long as the answer's `Retry-After` says (seconds)."""
    seconds = answer.headers.get("retry-after", "")
    if isinstance(error, RateLimited) and seconds.isdigit():
        error.retry_after = float(seconds)
    return error


def auth_refusal(answer: Answer, what: str) -> A2AError | None:
    """The refusal a 401 or 403 without an A2A error body stands for (an agent behind a
    gateway or a server of another implementation); 401 says what `WWW-Authenticate` asks."""
    if answer.status_code == 401:
        challenge = answer.headers.get("www-authenticate")
        wants = f"; it accepts {challenge}" if challenge else ""
        return Unauthenticated(
            f"{what} answered HTTP 401: credentials missing or refused{wants}",
            challenges=[challenge] if challenge else None,
        )
    if answer.status_code == 403:
        return PermissionDenied(f"{what} answered HTTP 403: these credentials are not allowed")
    return None
