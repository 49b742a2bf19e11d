"""The agent behind a gateway: its card, and accord's client to it, one per set of extensions."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack

from accord.client import Client, activated_extensions
from accord.client.client import card_auth
from accord.client.credentials import Credential, Credentials
from accord.client.keepalive import KeepAliveTransport
from accord.core.call_context import CallContext
from accord.core.extension_headers import extension_headers
from accord.core.translated_errors import TranslatedErrors
from accord.errors import A2AClientError, A2AError, InternalError, PermissionDenied, Unauthenticated
from accord.extensions.negotiation import requested_extensions
from accord.types import (
    AgentCard,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    StreamEvent,
    Task,
)

CLIENTS_KEPT = 16
"""Clients kept open, one per set of extensions callers activate (most activate none)."""


class Upstream:
    """The upstream agent: calls go in the version and binding its card offers first that
    accord speaks (or `transport` and `version`), with the gateway's own `credentials`.

    Each call activates at the upstream the extensions of the upstream's card that the caller
    asked the gateway for (its `A2A-Extensions` header); a client per such set is kept.
    """

    def __init__(
        self,
        url: str,
        card: AgentCard,
        *,
        credentials: Credentials | Sequence[Credential] | None = None,
        transport: str | None = None,
        version: str | None = None,
    ) -> None:
        self.url = url
        self.card = card
        self.credentials = credentials
        self.wanted = (transport, version)
        self.extensions = frozenset(e.uri for e in card.capabilities.extensions or ())
        self._clients: dict[tuple[str, ...], Client] = {}

    @property
    def streams(self) -> bool:
        return bool(self.card.capabilities.streaming)

    def client(self, call: CallContext | None) -> Client:
        """The client for a call: activating the upstream's extensions the caller asked for."""
        uris: tuple[str, ...] = ()
        if call is not None and self.extensions:  # an upstream declaring none activates none
            uris = tuple(u for u in requested_extensions(call.headers) if u in self.extensions)
        client = self._clients.get(uris)
        if client is None and len(self._clients) >= CLIENTS_KEPT:
            uris = ()  # more combinations than kept: a rare caller's go unactivated
            client = self._clients.get(uris)
        if client is None:
            client = Client(
                self.url,
                card=self.card,
                credentials=self.credentials,
                transport=self.wanted[0],
                version=self.wanted[1],
                headers=extension_headers(uris),
                http_transport=keep_alive_transport(self.credentials),
            )
            self._clients[uris] = client
        return client

    async def open(self, params: MessageSendParams, call: CallContext | None) -> UpstreamCall:
        """Send the caller's message on: the call, its first event read (so the task's ids
        are known). Streamed when the upstream streams, unless the caller only waits for the
        outcome: then one blocking send costs the upstream and the gateway less, and answers
        sooner."""
        client = self.client(call)
        if not self.streams or waits_for_outcome(params, call):
            with upstream_errors(self.url), activated_extensions() as activated:
                transport = await client.transport()
                reply = await transport.call(transport.codec.send, blocking_send(params))
            return UpstreamCall(reply, None, None, activated)
        configuration = params.configuration
        modes = configuration.accepted_output_modes if configuration else None
        stack = AsyncExitStack()
        try:
            with upstream_errors(self.url), activated_extensions() as activated:
                events = await stack.enter_async_context(
                    client.stream(
                        params.message, accepted_output_modes=modes, metadata=params.metadata
                    )
                )
                first = await anext(events, None)
            if first is None:
                raise InternalError(f"the agent at {self.url} ended its stream without answering")
            return UpstreamCall(first, events, stack, activated)
        except BaseException:
            await stack.aclose()
            raise

    async def get_task(self, task_id: str) -> Task:
        with upstream_errors(self.url):
            return await self.client(None).get_task(task_id)

    async def cancel_task(self, task_id: str) -> Task:
        with upstream_errors(self.url):
            return await self.client(None).cancel_task(task_id)

    async def follow(self, task_id: str) -> UpstreamCall | None:
        """Follow an upstream task again (None when the upstream does not stream)."""
        if not self.streams:
            return None
        stack = AsyncExitStack()
        try:
            with upstream_errors(self.url):
                events = await stack.enter_async_context(self.client(None).resubscribe(task_id))
                first = await anext(events, None)
        except BaseException:
            await stack.aclose()
            raise
        if first is None:
            await stack.aclose()
            return None
        return UpstreamCall(first, events, stack)

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()


class UpstreamCall:
    """One call to the upstream: its first event, already read, then the rest of its stream
    (none for a plain send), and the extensions the upstream says it activated. Close it
    (`async with`) to release the stream's connection."""

    def __init__(
        self,
        first: StreamEvent,
        rest: AsyncIterator[StreamEvent] | None,
        stack: AsyncExitStack | None,
        activated: Sequence[str] = (),
    ) -> None:
        self.first = first
        self.rest = rest
        self.activated = activated
        """The extensions the upstream says the call activated."""
        self._stack = stack

    @property
    def task_id(self) -> str | None:
        """The upstream task it answers with (None: a message reply)."""
        if isinstance(self.first, Message):
            return None
        return self.first.id if isinstance(self.first, Task) else self.first.task_id

    @property
    def context_id(self) -> str | None:
        return self.first.context_id

    async def rest_events(self, url: str) -> AsyncIterator[StreamEvent]:
        """The events of the call's stream after the first one."""
        if self.rest is not None:
            with upstream_errors(url):
                async for event in self.rest:
                    yield event

    async def aclose(self) -> None:
        if self._stack is not None:  # a plain send holds no connection
            await self._stack.aclose()

    async def __aenter__(self) -> UpstreamCall:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def keep_alive_transport(
    credentials: Credentials | Sequence[Credential] | None,
) -> KeepAliveTransport | None:
    """The lean transport for plain HTTP (a millisecond of CPU less per call than httpx's
    own), unless the credentials bring TLS settings (a CA bundle, a client certificate)."""
    auth = card_auth(credentials)
    if auth is not None and auth.credentials.ssl_context() is not None:
        return None
    return KeepAliveTransport()


BLOCKING = MessageSendConfiguration(blocking=True)
"""What a blocking send relayed says of itself when its caller accepts any output mode."""


def blocking_send(params: MessageSendParams) -> MessageSendParams:
    """The params of the blocking send relaying a caller's: its message, metadata and
    accepted output modes, as `Client.send` sends them, the models not built again."""
    configuration = params.configuration
    modes = configuration.accepted_output_modes if configuration else None
    if modes:
        configuration = MessageSendConfiguration(blocking=True, accepted_output_modes=modes)
    else:
        configuration = BLOCKING
    return params.copied_with(configuration=configuration)


def waits_for_outcome(params: MessageSendParams, call: CallContext | None) -> bool:
    """Whether the caller of a send only waits for its outcome: a blocking send, not a
    stream, with no webhook to tell of each state on the way."""
    configuration = params.configuration
    return (
        call is not None
        and not call.streaming
        and (configuration is None or configuration.blocking is not False)
        and (configuration is None or configuration.push_notification_config is None)
    )


class upstream_errors(TranslatedErrors):  # named as the function it stands for
    """The upstream's A2A errors as they are, for the caller; what is the gateway's own
    trouble with it (unreachable, its credentials refused, an answer it cannot read) as an
    InternalError saying so."""

    __slots__ = ("url",)

    def __init__(self, url: str) -> None:
        self.url = url

    def translated(self, exc: BaseException) -> BaseException | None:
        if isinstance(exc, (Unauthenticated, PermissionDenied)):
            return InternalError(
                f"the agent at {self.url} refused the gateway's credentials: {exc.message}"
            )
        if isinstance(exc, A2AClientError) and not isinstance(exc, A2AError):
            return InternalError(f"the agent at {self.url} cannot be reached: {exc}")
        return None
