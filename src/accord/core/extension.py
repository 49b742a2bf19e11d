"""Extension: what an A2A extension adds to an agent — card data, request shaping, methods."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from accord.types import AgentExtension, Message, MessageSendParams, Task, TaskIdParams

if TYPE_CHECKING:
    from accord.core.call_context import CallContext
    from accord.core.records import StreamItem

ExtensionMethod = Callable[[Any, "CallContext"], Awaitable[Any]]
"""A JSON-RPC method an extension adds: (raw params, call) -> JSON-serializable result."""


class Extension:
    """One extension an agent supports, identified by its URI.

    - Data only: `params` appear in the card's `capabilities.extensions` entry.
    - Profile: override `shape_request` / `shape_result` / `shape_event` to inspect,
      validate or annotate sends and what streams carry (they run only when the client
      activated the extension).
    - Methods: `methods` maps new JSON-RPC method names to coroutines; they go through the
      same endpoint, authentication and error handling as the core methods.

    `required=True` makes the server refuse requests that do not activate the extension.
    """

    uri: str = ""
    description: str | None = None
    required: bool = False
    params: Mapping[str, Any] | None = None
    methods: Mapping[str, ExtensionMethod] = {}

    def card_entry(self) -> AgentExtension:
        """How the agent card declares this extension."""
        return AgentExtension(
            uri=self.uri,
            description=self.description,
            required=self.required or None,
            params=dict(self.params) if self.params is not None else None,
        )

    async def shape_request(self, params: MessageSendParams, call: CallContext) -> None:
        """Look at (or change, or refuse with an A2AError) a send before the agent runs."""

    async def shape_result(
        self, result: Task | Message, params: MessageSendParams, call: CallContext
    ) -> Task | Message:
        """Look at or annotate the result of a non-streaming send (`params` as shaped by
        `shape_request`); returns the result."""
        return result

    async def shape_event(
        self, event: StreamItem, params: MessageSendParams | TaskIdParams, call: CallContext
    ) -> StreamItem:
        """Look at or annotate one event a stream is about to carry: each event of a streamed
        send (`params` as shaped by `shape_request`) or of a resubscribe (`params` names the
        task), on every binding. Returns the event; change it with `model_copy`, never in
        place — the same event goes to every other stream and webhook of the task."""
        return event

    def metadata_key(self, name: str) -> str:
        """The metadata key this extension owns for `name` (`<uri>/<name>`)."""
        return f"{self.uri}/{name}"
