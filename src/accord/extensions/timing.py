"""The timing extension: when the agent received a message and how long it took to answer.

URI `urn:accord:ext:timing:v1`. A profile extension with one method:

- on a send that activates it, the request's metadata gets `<uri>/receivedAt` (the server's
  ISO 8601 time of arrival, which the agent can read from `context.metadata`), and the
  result's metadata gets `<uri>/receivedAt`, `<uri>/respondedAt` and `<uri>/elapsedMs`;
- on a stream that activates it, every event's metadata gets the same three stamps, taken
  as that event is sent (time to first event, to each chunk); a resubscribe, which brings
  no message, stamps only `<uri>/respondedAt`;
- the JSON-RPC method `timing/now` answers `{"now": "<server time>"}`, so a client can
  estimate clock skew before trusting the stamps.

Its card entry carries `params: {"clock": "UTC"}`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from accord.core.extension import Extension, ExtensionMethod
from accord.types import Message, MessageSendParams, Metadata, Task, TaskIdParams, utc_now

if TYPE_CHECKING:
    from accord.core.call_context import CallContext
    from accord.core.records import StreamItem

TIMING_URI = "urn:accord:ext:timing:v1"


class TimingExtension(Extension):
    """Stamps sends and streamed events with arrival and answer times; adds `timing/now`."""

    uri = TIMING_URI
    description = "Stamps results with when the message arrived and how long the answer took."
    params = {"clock": "UTC"}

    def __init__(self) -> None:
        self.methods: dict[str, ExtensionMethod] = {"timing/now": self._now}

    async def shape_request(self, params: MessageSendParams, call: CallContext) -> None:
        params.metadata = {**(params.metadata or {}), self.metadata_key("receivedAt"): utc_now()}

    async def shape_result(
        self, result: Task | Message, params: MessageSendParams, call: CallContext
    ) -> Task | Message:
        return result.model_copy(update={"metadata": self._stamped(result.metadata, params)})

    async def shape_event(
        self, event: StreamItem, params: MessageSendParams | TaskIdParams, call: CallContext
    ) -> StreamItem:
        return event.model_copy(update={"metadata": self._stamped(event.metadata, params)})

    def _stamped(
        self, metadata: Metadata | None, params: MessageSendParams | TaskIdParams
    ) -> dict[str, Any]:
        """`metadata` with the stamps of an answer to the request `params`, sent now."""
        received = (params.metadata or {}).get(self.metadata_key("receivedAt"))
        responded = utc_now()
        stamps: dict[str, Any] = {self.metadata_key("respondedAt"): responded}
        if isinstance(received, str):
            stamps[self.metadata_key("receivedAt")] = received
            elapsed = _instant(responded) - _instant(received)
            stamps[self.metadata_key("elapsedMs")] = round(elapsed.total_seconds() * 1000, 3)
        return {**(metadata or {}), **stamps}

    async def _now(self, params: Any, call: CallContext) -> dict[str, str]:
        return {"now": utc_now()}


def _instant(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)
