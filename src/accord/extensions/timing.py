"""The timing extension: when the agent received a message and how long it took to answer.

URI `urn:accord:ext:timing:v1`. A profile extension with one method:

- on a send that activates it, the request's metadata gets `<uri>/receivedAt` (the server's
  ISO 8601 time of arrival, which the agent can read from `context.metadata`), and the
  result's metadata gets `<uri>/receivedAt`, `<uri>/respondedAt` and `<uri>/elapsedMs`;
- the JSON-RPC method `timing/now` answers `{"now": "<server time>"}`, so a client can
  estimate clock skew before trusting the stamps.

Its card entry carries `params: {"clock": "UTC"}`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from accord.extensions.base import Extension, ExtensionMethod
from accord.types import Message, MessageSendParams, Task, utc_now

if TYPE_CHECKING:
    from accord.server.call_context import CallContext

TIMING_URI = "urn:accord:ext:timing:v1"


class TimingExtension(Extension):
    """Stamps sends with arrival and answer times; adds `timing/now`."""

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
        received = (params.metadata or {}).get(self.metadata_key("receivedAt"))
        responded = utc_now()
        stamps: dict[str, Any] = {
            self.metadata_key("receivedAt"): received,
            self.metadata_key("respondedAt"): responded,
        }
        if isinstance(received, str):
            elapsed = _instant(responded) - _instant(received)
            stamps[self.metadata_key("elapsedMs")] = round(elapsed.total_seconds() * 1000, 3)
        return result.model_copy(update={"metadata": {**(result.metadata or {}), **stamps}})

    async def _now(self, params: Any, call: CallContext) -> dict[str, str]:
        return {"now": utc_now()}


def _instant(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)
