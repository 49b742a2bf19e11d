"""Client: the async A2A client, from an agent's URL to typed results over the interface chosen."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import aclosing
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from accord.client.card_auth import CardAuth
from accord.client.card_resolver import check_signature, fetch_card
from accord.client.credentials import Credential, Credentials
from accord.client.direct import DirectClient
from accord.client.event_stream import EventStream, IdentifiedEvents
from accord.client.interfaces import select_interface
from accord.client.keepalive import KeepAliveTransport
from accord.client.messages import send_params, user_message
from accord.client.transports import TRANSPORTS, Transport, open_transport
from accord.client.transports.base import decoded
from accord.codecs.base import ClientCall
from accord.core.extension_headers import extension_headers
from accord.core.query import DEFAULT_PAGE_SIZE, ListTasksParams, TaskPage, TaskQuery
from accord.errors import A2AClientError
from accord.types import (
    AgentCard,
    AgentInterface,
    DeleteTaskPushNotificationConfigParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    Message,
    Metadata,
    Part,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
)

if TYPE_CHECKING:
    from accord.keys.cards import TrustedKeys

P = TypeVar("P")
R = TypeVar("R")
TaskOrMessage = TypeVar("TaskOrMessage", Task, Message, Task | Message)


def _at_most(history_length: int | None, result: TaskOrMessage) -> TaskOrMessage:
    """`result` with no more than `history_length` messages of history, however the server
    read the limit: 0.3's proto (HTTP+JSON, gRPC) has history_length 0 mean unlimited, so no
    0.3 request there can ask for none."""
    if history_length is None or not isinstance(result, Task) or result.history is None:
        return result
    keep = max(history_length, 0)
    if len(result.history) <= keep:
        return result
    history = result.history[len(result.history) - keep :] or None
    return result.model_copy(update={"history": history})


DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)
"""Per network operation; streams stay open as long as events or keep-alives keep coming."""


class Client:
    """Talks to one A2A agent over the interface its card offers first that accord speaks.

    `url` is the agent's base URL (or the URL of its card). The card is fetched on the first
    call; calls go to the first of its interfaces (in the card's order) that accord speaks
    (JSON-RPC, HTTP+JSON or, with the `grpc` extra, gRPC; A2A 1.0 or 0.3/0.2; 0.1 over
    JSON-RPC) and that has the `transport` ("JSONRPC", "HTTP+JSON", "GRPC") and `version`
    ("1.0", "0.3", "0.1") asked for, if any are. Cards of 0.1 agents name no version: ask for
    "0.1" to speak it at the card's JSON-RPC interface (`select_interface`). Use as
    `async with Client(url) as c:`. `http_client` lets you bring your own httpx client (then
    `timeout` is its business, and closing it stays yours), or only an httpx transport
    (`http_transport`, e.g. one recording the wire) under the client's own; `headers` go with
    every request. A transport given makes its connections with TLS settings of its own, so
    credentials with a CA bundle or a client certificate cannot go with it (ValueError, rather
    than a connection that quietly goes without them).
    `credentials` (`accord.client.Credentials`, or a list of credentials) are presented as the
    card's security requirements ask: API keys, bearer and basic, OAuth 2.0 client
    credentials, client certificates.
    With `trusted_keys` (a JWKS URL, a `JwksClient` or `StaticKeys`), the fetched card must
    carry a signature by one of those keys, or every call fails with A2AClientError; so must
    the extended card, or `get_extended_card` fails with it.
    `extensions` (URIs) are asked to be activated on every request (`A2A-Extensions`, and
    `X-A2A-Extensions` for A2A 0.3 agents): the agent activates those it implements, and
    `activated_extensions()` tells which it says it did.
    """

    def __init__(
        self,
        url: str,
        *,
        http_client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        card: AgentCard | None = None,
        transport: str | None = None,
        version: str | None = None,
        credentials: Credentials | Sequence[Credential] | None = None,
        trusted_keys: TrustedKeys | str | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        extensions: Sequence[str] = (),
    ) -> None:
        self.url = url
        self._owns_http = http_client is None
        self._auth = card_auth(credentials)
        if http_client is not None and self._auth is not None:
            raise ValueError("give credentials to a Client that makes its own HTTP client")
        if http_client is None:
            http_client = httpx_client(timeout, self._auth, http_transport)
        self._http = http_client
        self._headers = dict(headers or {})
        if extensions:
            self._headers |= extension_headers(extensions)
        self._card = card
        self._wanted = (transport, version)
        self._transport: Transport | None = None
        # Its own HTTP client: the agent's credentials are not for whoever publishes the keys.
        self._trusted_keys = (
            _jwks_client(trusted_keys) if isinstance(trusted_keys, str) else trusted_keys
        )

    @property
    def interface(self) -> AgentInterface | None:
        """The interface calls go to, once chosen (on the first call)."""
        return self._transport.interface if self._transport else None

    @property
    def card(self) -> AgentCard | None:
        """The agent card, once resolved."""
        return self._card

    @staticmethod
    async def discover(
        registry_url: str,
        query: str = "",
        *,
        trusted_keys: TrustedKeys | str | None = None,
        limit: int | None = None,
        **filters: str | Sequence[str],
    ) -> list[AgentCard]:
        """The cards of the agents the accord registry at `registry_url` finds for `query`,
        best first, narrowed by `filters` (skill, tag, input_mode, output_mode, version,
        binding, provider, scheme, status); with `trusted_keys` (as for a Client), only the
        cards signed by them. Then `Client(card.url, card=card)` talks to one."""
        from accord.client.registry import discover  # the registry's API: only when used

        keys = _jwks_client(trusted_keys) if isinstance(trusted_keys, str) else trusted_keys
        return await discover(registry_url, query, filters, trusted_keys=keys, limit=limit)

    async def get_card(self) -> AgentCard:
        """The agent's public card (fetched once, then cached)."""
        if self._card is None:
            self._card = await fetch_card(
                self._http, self.url, self._headers, trusted_keys=self._trusted_keys
            )
        return self._card

    async def send(
        self,
        content: str | Message,
        *,
        parts: Sequence[Part] = (),
        task_id: str | None = None,
        context_id: str | None = None,
        blocking: bool = True,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        metadata: Metadata | None = None,
        reference_task_ids: Sequence[str] | None = None,
        push: PushNotificationConfig | None = None,
    ) -> Task | Message:
        """Send a message (`message/send`); the agent answers with a Task or a Message.

        `content` is text for a new user message (with extra `parts` after it) or a whole
        Message. With `blocking=False` the agent answers as soon as the task exists. `push`
        registers a webhook for the task's updates.
        """
        message = user_message(
            content,
            parts=parts,
            task_id=task_id,
            context_id=context_id,
            reference_task_ids=reference_task_ids,
        )
        params = send_params(
            message,
            blocking=blocking,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            metadata=metadata,
            push=push,
        )
        transport = await self.transport()
        return _at_most(history_length, await transport.call(transport.codec.send, params))

    def stream(
        self,
        content: str | Message,
        *,
        parts: Sequence[Part] = (),
        task_id: str | None = None,
        context_id: str | None = None,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        metadata: Metadata | None = None,
        reference_task_ids: Sequence[str] | None = None,
        push: PushNotificationConfig | None = None,
    ) -> EventStream:
        """Send a message and follow the answer (`message/stream`).

        Yields the Task (or a single Message), then its status and artifact updates, until
        the server ends the stream (the task finished or waits for input). Should the
        connection break, `resubscribe` with the stream's `last_event_id` picks it up again.
        """
        message = user_message(
            content,
            parts=parts,
            task_id=task_id,
            context_id=context_id,
            reference_task_ids=reference_task_ids,
        )
        params = send_params(
            message,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            metadata=metadata,
            push=push,
        )
        return EventStream(self._follow(lambda t: t.codec.stream, params))

    async def get_task(self, task_id: str, *, history_length: int | None = None) -> Task:
        """The current state of a task (`tasks/get`), with at most `history_length` messages."""
        transport = await self.transport()
        params = TaskQueryParams(id=task_id, history_length=history_length)
        return _at_most(history_length, await transport.call(transport.codec.get_task, params))

    async def cancel_task(self, task_id: str) -> Task:
        """Cancel a task that has not finished (`tasks/cancel`)."""
        transport = await self.transport()
        return await transport.call(transport.codec.cancel_task, TaskIdParams(id=task_id))

    def resubscribe(self, task_id: str, *, last_event_id: int | None = None) -> EventStream:
        """Follow a running task again (`tasks/resubscribe`): the task, then each change.

        To resume a stream that broke off, pass its `last_event_id`: the server then sends
        the events that came after that one (each exactly once) instead of the task.
        """
        params = TaskIdParams(id=task_id)
        return EventStream(self._follow(lambda t: t.codec.resubscribe, params, last_event_id))

    async def get_extended_card(self) -> AgentCard:
        """The card for authenticated clients (`agent/getAuthenticatedExtendedCard`); with
        `trusted_keys`, only one signed by one of them, as the public card."""
        transport = await self.transport()
        call = transport.codec.get_extended_card
        if self._trusted_keys is None:
            return await transport.call(call, None)
        # The signature covers the card as the agent sent it: check that before decoding.
        document = await transport.call(ClientCall(call.name, call.encode, _as_sent), None)
        await check_signature(
            document, transport.url, self._trusted_keys, which="extended agent card"
        )
        return decoded(call.decode, document)

    async def list_tasks(
        self,
        *,
        context_id: str | None = None,
        state: TaskState | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        page_token: str | None = None,
        history_length: int | None = None,
        updated_after: datetime | None = None,
        include_artifacts: bool = False,
    ) -> TaskPage:
        """One page of the agent's tasks, most recently updated first (`ListTasks`, A2A 1.0).

        Pass the page's `next_page_token` as `page_token` for the next page (empty: the last).
        """
        transport = await self.transport()
        call = transport.codec.list_tasks
        if call is None:
            raise A2AClientError(
                f"listing tasks needs A2A 1.0; {transport.url} speaks {transport.codec.version}"
            )
        query = TaskQuery(context_id, state, updated_after, page_size, page_token)
        page: TaskPage = await transport.call(
            call, ListTasksParams(query, history_length, include_artifacts)
        )
        return page

    async def set_push_config(
        self, task_id: str, config: PushNotificationConfig
    ) -> TaskPushNotificationConfig:
        """Save a webhook for a task; the config comes back with its id."""
        transport = await self.transport()
        params = TaskPushNotificationConfig(task_id=task_id, push_notification_config=config)
        return await transport.call(transport.codec.set_push_config, params)

    async def get_push_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig:
        """One of a task's webhooks."""
        transport = await self.transport()
        params = GetTaskPushNotificationConfigParams(
            id=task_id, push_notification_config_id=config_id
        )
        return await transport.call(transport.codec.get_push_config, params)

    async def list_push_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """Every webhook of a task."""
        transport = await self.transport()
        params = ListTaskPushNotificationConfigParams(id=task_id)
        return await transport.call(transport.codec.list_push_configs, params)

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        """Forget one of a task's webhooks (forgetting one that is not there succeeds)."""
        transport = await self.transport()
        params = DeleteTaskPushNotificationConfigParams(
            id=task_id, push_notification_config_id=config_id
        )
        await transport.call(transport.codec.delete_push_config, params)

    async def transport(self) -> Transport:
        """The transport of the interface chosen from the card (chosen on the first call)."""
        if self._transport is None:
            card = await self.get_card()
            if self._auth is not None:
                self._auth.use(card)
            wanted_transport, wanted_version = self._wanted
            interface = select_interface(
                card, frozenset(TRANSPORTS), transport=wanted_transport, version=wanted_version
            )
            self._transport = open_transport(self._http, interface, self._headers)
        return self._transport

    async def aclose(self) -> None:
        """Close the transport, and the HTTP client unless it was given to us."""
        if self._transport is not None:
            await self._transport.aclose()
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _follow(
        self,
        call: Callable[[Transport], ClientCall[P, StreamEvent]],
        params: P,
        last_event_id: int | None = None,
    ) -> IdentifiedEvents:
        transport = await self.transport()
        events = transport.stream(call(transport), params, last_event_id)
        async with aclosing(events):
            async for item in events:
                yield item

    def __repr__(self) -> str:
        return f"Client(url={self.url!r})"


def _as_sent(document: Any) -> Any:
    return document


def card_auth(credentials: Credentials | Sequence[Credential] | None) -> CardAuth | None:
    if credentials is None:
        return None
    given = credentials if isinstance(credentials, Credentials) else Credentials(*credentials)
    return CardAuth(given)


def httpx_client(
    timeout: float | httpx.Timeout | None,
    auth: CardAuth | None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """The Client's own HTTP client: presenting `auth`'s credentials, over their TLS context
    (CA bundle, client certificate). A `transport` given is used as it is, with its own TLS:
    ValueError when the credentials have a TLS context it would silently go without."""
    context = auth.credentials.ssl_context() if auth is not None else None
    if context is not None and transport is not None:
        raise ValueError(
            "the credentials' CA bundle and client certificate cannot apply to an "
            "http_transport, which makes its connections with TLS settings of its own: "
            "leave http_transport out to use them"
        )
    if isinstance(transport, KeepAliveTransport):
        return DirectClient(timeout=timeout, auth=auth, transport=transport)
    return httpx.AsyncClient(
        timeout=timeout, auth=auth, verify=context or True, transport=transport
    )


def _jwks_client(url: str) -> TrustedKeys:
    """The keys published at `url` (accord.keys, with jwt and cryptography, loaded only now)."""
    from accord.keys import JwksClient

    return JwksClient(url)
