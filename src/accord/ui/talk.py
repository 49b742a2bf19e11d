"""Talking to agents for the UI: one accord Client per agent and interface, each turn run in
the background with its wire frames recorded."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx

from accord.client import Client, Credentials
from accord.client.credentials import CredentialsRequired, describe_requirements
from accord.errors import A2AClientError, A2AError, PermissionDenied, Unauthenticated
from accord.types import DataPart, Message, Part, Role, TextPart, new_id
from accord.ui.recording import CURRENT_SINK, RecordingTransport
from accord.ui.state import Conversation, Turn, UiState

logger = logging.getLogger("accord.ui")

GRPC_NOTE = (
    "gRPC carries protobuf messages over HTTP/2, which this log does not capture; the events "
    "below are shown decoded."
)


def frame_title(kind: str, text: str) -> str:
    """A frame's one-line title: its first line, or for an SSE frame its event id."""
    first = text.partition("\n")[0]
    if kind == "frame" and first.startswith("id: "):
        return f"SSE event {first[4:]}"
    return first[:120]


class Talker:
    """Sends the UI's messages and follows the answers, recording every frame on the wire."""

    def __init__(self, state: UiState, timeout: float = 60.0) -> None:
        self.state = state
        self.timeout = httpx.Timeout(timeout, connect=10.0)
        self.http = httpx.AsyncClient(transport=RecordingTransport(), timeout=self.timeout)
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
        key = (conversation.agent_url, conversation.transport, conversation.version)
        if key not in self._clients:
            credentials = self._credentials.get(conversation.agent_url.rstrip("/"))
            # With credentials the client makes its own httpx client (to present them), over
            # a recording transport all the same.
            self._clients[key] = Client(
                conversation.agent_url,
                http_client=self.http if credentials is None else None,
                transport=conversation.transport,
                version=conversation.version,
                credentials=credentials,
                http_transport=None if credentials is None else RecordingTransport(),
                timeout=self.timeout,
            )
        return self._clients[key]

    def send(
        self, conversation: Conversation, text: str, data: Any = None, task_id: str | None = None
    ) -> Turn:
        """Start a turn: the message goes out in the background; returns the turn at once."""
        parts: list[Part] = [TextPart(text=text)] if text or data is None else []
        if data is not None:
            parts.append(DataPart(data=data))
        message = Message(
            message_id=new_id(),
            role=Role.USER,
            parts=parts,
            context_id=conversation.context_id,
            task_id=task_id or self.state.waiting_task(conversation),
        )
        turn = self.state.open_turn(conversation, message)
        running = asyncio.create_task(self._run(conversation, turn, message))
        self._running.add(running)
        running.add_done_callback(self._running.discard)
        return turn

    async def _run(self, conversation: Conversation, turn: Turn, message: Message) -> None:
        def sink(kind: str, text: str) -> None:
            self.state.record(turn, kind, frame_title(kind, text), text)

        token = CURRENT_SINK.set(sink)
        error: str | None = None
        client = self.client(conversation)
        try:
            card = await client.get_card()
            transport = await client.transport()
            if transport.interface.transport == "GRPC":
                self.state.record(turn, "note", "gRPC", GRPC_NOTE)
            if card.capabilities.streaming:
                async with client.stream(message) as stream:
                    async for event in stream:
                        self.state.observe(turn, event)
            else:
                self.state.observe(turn, await client.send(message))
        except (Unauthenticated, PermissionDenied, CredentialsRequired) as exc:
            error = refusal_in_words(client, exc)
        except A2AError as exc:
            error = (
                f"the agent answered with error {exc.code} ({type(exc).__name__}): {exc.message}"
            )
        except A2AClientError as exc:
            error = str(exc)
        except Exception as exc:  # shown to the user rather than lost in a background task
            logger.exception("turn %s failed", turn.id)
            error = f"{type(exc).__name__}: {exc}"
        finally:
            CURRENT_SINK.reset(token)
        self.state.finish_turn(turn, error)

    async def aclose(self) -> None:
        for running in list(self._running):
            running.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)
        for client in self._clients.values():
            await client.aclose()
        await self.http.aclose()


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
