"""Talking to agents for the UI: one accord Client per agent and interface, each turn run in
the background with its wire frames recorded."""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import httpx

from accord.client import Client, Credentials
from accord.client.credentials import CredentialsRequired, describe_requirements
from accord.errors import A2AClientError, A2AError, PermissionDenied, Unauthenticated
from accord.types import DataPart, FilePart, Message, Part, Role, Task, TextPart, new_id
from accord.ui.attachments import without_bytes
from accord.ui.recording import CURRENT_SINK, CURRENT_TRACE, RecordingTransport
from accord.ui.state import Conversation, Turn, UiState, hidden
from accord.web.guarded_transport import GuardedTransport
from accord.web.webhook_guard import WebhookGuard, WebhookRefused

logger = logging.getLogger("accord.ui")
R = TypeVar("R")

GRPC_NOTE = (
    "gRPC carries protobuf messages over HTTP/2, which this log does not capture; the events "
    "below are shown decoded."
)


class AgentCallFailed(Exception):
    """The agent did not do what the UI asked; the message says why, for a person. `status` is
    the HTTP status the UI's API answers with: 409 when the agent refused, 502 when it could
    not be reached or answered nonsense."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status

    @classmethod
    def of(cls, client: Client, exc: A2AError | A2AClientError) -> AgentCallFailed:
        """The failure `exc` of a call to the agent of `client`."""
        return cls(failure_in_words(client, exc), 409 if isinstance(exc, A2AError) else 502)


def frame_title(kind: str, text: str) -> str:
    """A frame's one-line title: its first line, or for an SSE frame its event id."""
    first = text.partition("\n")[0]
    if kind == "frame" and first.startswith("id: "):
        return f"SSE event {first[4:]}"
    return first[:120]


class Talker:
    """Sends the UI's messages and follows the answers, recording every frame on the wire."""

    def __init__(
        self, state: UiState, timeout: float = 60.0, guard: WebhookGuard | None = None
    ) -> None:
        self.state = state
        self.timeout = httpx.Timeout(timeout, connect=10.0)
        self.guard = guard
        """With a guard, no request goes to an address it refuses (checked when connecting)."""
        self.http = httpx.AsyncClient(transport=self._transport(), timeout=self.timeout)
        self._clients: dict[tuple[str, str | None, str | None], Client] = {}
        self._credentials: dict[str, Credentials] = {}
        self._running: set[asyncio.Task[None]] = set()

    async def set_credentials(self, agent_url: str, credentials: Credentials | None) -> None:
        """Present `credentials` to the agent at `agent_url` from now on (None: none); they
        stay in this process's memory only."""
        url = agent_url.rstrip("/")
        if credentials is None:
            self._credentials.pop(url, None)
        else:
            self._credentials[url] = credentials
        for key in [key for key in self._clients if key[0].rstrip("/") == url]:
            await self._clients.pop(key).aclose()

    def client(self, conversation: Conversation) -> Client:
        """The client of the agent and interface the conversation talks on."""
        return self.client_for(conversation.agent_url, conversation.transport, conversation.version)

    def client_for(
        self, agent_url: str, transport: str | None = None, version: str | None = None
    ) -> Client:
        """The client of the agent at `agent_url` (on the interface named, else the one its
        card prefers), presenting the credentials it was given."""
        key = (agent_url, transport, version)
        if key not in self._clients:
            credentials = self._credentials.get(agent_url.rstrip("/"))
            # With credentials the client makes its own httpx client (to present them), over
            # a recording transport all the same.
            self._clients[key] = Client(
                agent_url,
                http_client=self.http if credentials is None else None,
                transport=transport,
                version=version,
                credentials=credentials,
                http_transport=None if credentials is None else self._transport(),
                timeout=self.timeout,
            )
        return self._clients[key]

    def _transport(self) -> RecordingTransport:
        """A recording transport, over the guard's when there is one."""
        return RecordingTransport(GuardedTransport(self.guard) if self.guard else None)

    async def checked(self, client: Client) -> None:
        """AgentCallFailed when the interface the client chose is one the guard refuses (gRPC
        goes around the guarded HTTP transport, so its address is checked here)."""
        if self.guard is None:
            return
        try:
            transport = await client.transport()
        except (A2AError, A2AClientError) as exc:
            raise AgentCallFailed.of(client, exc) from None
        if transport.interface.transport == "GRPC":
            try:
                await self.guard.check(transport.interface.url)
            except WebhookRefused as exc:
                raise AgentCallFailed(f"the UI does not call {transport.interface.url}: {exc}",
                                      502) from None  # fmt: skip

    def send(
        self,
        conversation: Conversation,
        text: str,
        data: Any = None,
        task_id: str | None = None,
        file: FilePart | None = None,
        secrets: tuple[str, ...] = (),
    ) -> Turn:
        """Start a turn: the message goes out in the background; returns the turn at once. The
        `secrets` it carries (typed in masked fields) are never shown: not in the
        conversation, not in the frames on the wire, not in the events decoded."""
        parts: list[Part] = [TextPart(text=text)] if text or (data is None and file is None) else []
        if data is not None:
            parts.append(DataPart(data=data))
        if file is not None:
            parts.append(file)
        message = Message(
            message_id=new_id(),
            role=Role.USER,
            parts=parts,
            context_id=conversation.context_id,
            task_id=task_id or self.state.waiting_task(conversation),
        )
        shown = hidden(without_bytes(message.to_wire()), secrets)
        turn = self.state.open_turn(conversation, {"message": shown}, secrets=secrets)
        running = asyncio.create_task(self._run(conversation, turn, message))
        self._running.add(running)
        running.add_done_callback(self._running.discard)
        return turn

    async def cancel(self, agent_url: str, task_id: str) -> Task:
        """Cancel the task `task_id` at the agent, and return it as the agent then has it. A
        task of the UI's conversations is canceled on its conversation's interface, in a turn
        of its own (its frames recorded); AgentCallFailed says why the agent did not."""
        view = self.state.tasks.get(task_id)
        if view is None or view.agent_url != agent_url:
            return await self.call(self.client_for(agent_url), lambda c: c.cancel_task(task_id))
        conversation = self.state.conversations[view.conversation_id]
        turn = self.state.open_turn(conversation, {"cancel": task_id}, task_id)
        error: str | None = None
        try:
            with self._recorded(turn):
                task = await self.call(self.client(conversation), lambda c: c.cancel_task(task_id))
            self.state.observe(turn, task)
            return task
        except AgentCallFailed as exc:
            error = str(exc)
            raise
        finally:
            self.state.finish_turn(turn, error)

    async def call(self, client: Client, operation: Callable[[Client], Awaitable[R]]) -> R:
        """`operation` on `client`, its failure an AgentCallFailed in words."""
        await self.checked(client)
        try:
            return await operation(client)
        except (A2AError, A2AClientError) as exc:
            raise AgentCallFailed.of(client, exc) from None

    @contextmanager
    def _recorded(self, turn: Turn) -> Iterator[None]:
        """Record in `turn` every frame the UI's clients exchange meanwhile."""

        def sink(kind: str, text: str) -> None:
            if kind == "request" and turn.trace_id is None:
                turn.trace_id = traceparent_trace(text)
            self.state.record(turn, kind, frame_title(kind, text), text)

        token = CURRENT_SINK.set(sink)
        trace = CURRENT_TRACE.set(secrets.token_hex(16))
        try:
            yield
        finally:
            CURRENT_TRACE.reset(trace)
            CURRENT_SINK.reset(token)

    async def _run(self, conversation: Conversation, turn: Turn, message: Message) -> None:
        error: str | None = None
        client = self.client(conversation)
        with self._recorded(turn):
            try:
                card = await client.get_card()
                await self.checked(client)
                transport = await client.transport()
                if transport.interface.transport == "GRPC":
                    self.state.record(turn, "note", "gRPC", GRPC_NOTE)
                if card.capabilities.streaming:
                    async with client.stream(message) as stream:
                        async for event in stream:
                            self.state.observe(turn, event)
                else:
                    self.state.observe(turn, await client.send(message))
            except (A2AError, A2AClientError) as exc:
                error = failure_in_words(client, exc)
            except AgentCallFailed as exc:
                error = str(exc)
            except Exception as exc:  # shown to the user rather than lost in a background task
                logger.exception("turn %s failed", turn.id)
                error = f"{type(exc).__name__}: {exc}"
        self.state.finish_turn(turn, error)

    async def aclose(self) -> None:
        for running in list(self._running):
            running.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
        for client in self._clients.values():
            await client.aclose()
        await self.http.aclose()


def failure_in_words(client: Client, exc: A2AError | A2AClientError) -> str:
    """What went wrong in a call to the agent of `client`, for a person."""
    if isinstance(exc, Unauthenticated | PermissionDenied | CredentialsRequired):
        return refusal_in_words(client, exc)
    if isinstance(exc, A2AError):
        return f"the agent answered with error {exc.code} ({type(exc).__name__}): {exc.message}"
    return str(exc)


def refusal_in_words(client: Client, exc: Exception) -> str:
    """Why the agent refused, and what its card asks for (a credential to give when adding it)."""
    card = client.card
    name = card.name if card is not None else client.url
    asks = describe_requirements(card) if card is not None and card.security else None
    if isinstance(exc, PermissionDenied):
        said = f"{name} refused these credentials (HTTP 403: not allowed)"
    elif isinstance(exc, CredentialsRequired):
        said = f"{name} needs credentials this UI was not given"
    else:
        said = f"{name} refused the request: HTTP 401, credentials missing or wrong"
    wants = f"; it asks for {asks}" if asks else ""
    hint = ". Add the agent again (Agents page or Inspector) with that credential."
    reason = exc.message if isinstance(exc, A2AError) else str(exc)
    return f"{said}{wants}{hint} ({reason})"


_TRACEPARENT = re.compile(r"^traceparent: [0-9a-f]{2}-([0-9a-f]{32})-", re.MULTILINE)


def traceparent_trace(request: str) -> str | None:
    """The trace id of the `traceparent` a recorded request frame shows, if it shows one."""
    found = _TRACEPARENT.search(request)
    return found.group(1) if found else None
