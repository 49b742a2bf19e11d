"""What the UI knows: agents, conversations, the turns and tasks they made, and who is watching.

Everything lives in memory for the life of the UI process; each change is published to the
open pages (`Hub`) as a named event with JSON data.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from accord.codecs.card_schemas import CardCheck
from accord.errors import A2AError
from accord.runtime.state_machine import apply_event
from accord.types import (
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from accord.ui.recording import clipped

Json = dict[str, Any]
Subscription = asyncio.Queue[tuple[str, Json] | None]
HIDDEN = "•••••• (hidden)"
"""What a secret the user typed in a masked field is shown as, wherever it would appear."""


def hide(text: str, secrets: Sequence[str]) -> str:
    """`text` with each of `secrets` (as it is, or escaped inside a JSON string) made HIDDEN."""
    for secret in secrets:
        for form in dict.fromkeys(
            (secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1])
        ):
            text = text.replace(form, HIDDEN)
    return text


def hidden(value: Any, secrets: Sequence[str]) -> Any:
    """A JSON value with `secrets` hidden in every text it holds."""
    if not secrets:
        return value
    if isinstance(value, str):
        return hide(value, secrets)
    if isinstance(value, list):
        return [hidden(item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: hidden(item, secrets) for key, item in value.items()}
    return value


class Hub:
    """Fans each published event out to every open page's queue."""

    def __init__(self) -> None:
        self._queues: set[Subscription] = set()

    def subscribe(self) -> Subscription:
        queue: Subscription = asyncio.Queue()
        self._queues.add(queue)
        return queue

    def unsubscribe(self, queue: Subscription) -> None:
        self._queues.discard(queue)

    def publish(self, name: str, data: Json) -> None:
        for queue in self._queues:
            queue.put_nowait((name, data))

    def close(self) -> None:
        """End every open page's stream (the server is stopping)."""
        for queue in self._queues:
            queue.put_nowait(None)


@dataclass
class AgentEntry:
    """An agent added by URL: its card as served, how the card checks, its host routes."""

    url: str
    card_url: str
    card: Json
    checks: list[CardCheck]
    host_agents: list[Json] | None = None  # the agents it delegates to, when it is a host
    credentials: list[str] = field(default_factory=list)  # which are given (never values)

    @property
    def name(self) -> str:
        name = self.card.get("name")
        return name if isinstance(name, str) and name else self.url

    def to_json(self) -> Json:
        return {
            "url": self.url,
            "cardUrl": self.card_url,
            "name": self.name,
            "card": self.card,
            "checks": [check.to_json() for check in self.checks],
            "valid": all(check.valid for check in self.checks),
            "host": self.host_agents is not None,
            "hostAgents": self.host_agents,
            "credentials": self.credentials,
        }


@dataclass
class WireEntry:
    """One line of a turn's timeline: a frame on the wire, a decoded event, or a note."""

    number: int
    kind: str  # request, response, frame, event, note, error
    title: str
    text: str
    at: float = field(default_factory=time.time)

    def to_json(self) -> Json:
        return {"n": self.number, "kind": self.kind, "title": self.title, "text": self.text,
                "at": self.at}  # fmt: skip


@dataclass
class Turn:
    """One message sent and everything that came back for it."""

    id: str
    conversation_id: str
    task_id: str | None = None
    status: Json | None = None  # the task's status as this turn left it
    artifact_ids: list[str] = field(default_factory=list)
    message: Json | None = None  # a plain reply (no task)
    error: str | None = None
    done: bool = False
    cancel: bool = False  # the turn asks the agent to cancel the task
    entries: list[WireEntry] = field(default_factory=list)
    trace_id: str | None = None  # the trace its requests named (`traceparent`)

    def item(self) -> Json:
        """The conversation item showing what came back."""
        return {
            "role": "agent",
            "turn": self.id,
            "task": self.task_id,
            "status": self.status,
            "artifacts": self.artifact_ids,
            "message": self.message,
            "error": self.error,
            "done": self.done,
            "cancel": self.cancel,
        }


@dataclass
class TaskView:
    """A task as the UI has seen it: the agent's task with every event applied, its turns."""

    task: Task
    agent_url: str
    conversation_id: str
    turn_ids: list[str] = field(default_factory=list)
    updated: float = field(default_factory=time.time)
    trace_id: str | None = None  # the trace of the turn that started it

    def summary(self) -> Json:
        message = self.task.status.message
        return {
            "id": self.task.id,
            "agent": self.agent_url,
            "conversation": self.conversation_id,
            "state": self.task.status.state.value,
            "text": message.text if message is not None else "",
            "updated": self.updated,
            "trace": self.trace_id,
            # Without its history, which the conversation shows (and which may hold files).
            "task": self.task.model_copy(update={"history": None}).to_wire(),
        }


@dataclass
class Conversation:
    """Turns with one agent, in one context; `transport`/`version` pin an interface."""

    id: str
    agent_url: str
    transport: str | None = None
    version: str | None = None
    context_id: str | None = None
    items: list[Json] = field(default_factory=list)  # user messages and turn ids

    def to_json(self, turns: dict[str, Turn]) -> Json:
        items = [turns[item["turn"]].item() if "turn" in item else item for item in self.items]
        return {
            "id": self.id,
            "agent": self.agent_url,
            "transport": self.transport,
            "version": self.version,
            "contextId": self.context_id,
            "items": items,
        }


class UiState:
    """The UI's agents, conversations, turns and tasks; every change is published on `hub`."""

    def __init__(self) -> None:
        self.hub = Hub()
        self.agents: dict[str, AgentEntry] = {}
        self.conversations: dict[str, Conversation] = {}
        self.turns: dict[str, Turn] = {}
        self.tasks: dict[str, TaskView] = {}
        self.secrets: list[str] = []  # typed in masked fields: never recorded
        self.trace_url: str | None = None  # a trace viewer's URL, `{trace_id}` in it
        self._ids = itertools.count(1)

    def next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    def snapshot(self, task_id: str | None = None) -> Json:
        """Everything a page shows, and with `task_id` that task's timeline."""
        data: Json = {
            "agents": [agent.to_json() for agent in self.agents.values()],
            "conversations": [c.to_json(self.turns) for c in self.conversations.values()],
            "tasks": [view.summary() for view in self.tasks.values()],
            "traceUrl": self.trace_url,
        }
        if task_id is not None:
            data["timeline"] = self.timeline(task_id)
        return hidden(data, self.secrets)  # type: ignore[no-any-return]

    def timeline(self, task_id: str) -> list[Json]:
        view = self.tasks.get(task_id)
        if view is None:
            return []
        return [
            {**entry.to_json(), "turn": turn_id}
            for turn_id in view.turn_ids
            for entry in self.turns[turn_id].entries
        ]

    def add_agent(self, agent: AgentEntry) -> None:
        self.agents[agent.url] = agent
        self._publish("agent", agent.to_json())

    def remove_agent(self, url: str) -> None:
        if self.agents.pop(url, None) is not None:
            self._publish("agentRemoved", {"url": url})

    def conversation(
        self,
        conversation_id: str | None,
        agent_url: str,
        transport: str | None = None,
        version: str | None = None,
    ) -> Conversation:
        """The conversation named, or a new one with `agent_url` (on the interface pinned)."""
        if conversation_id and conversation_id in self.conversations:
            return self.conversations[conversation_id]
        conversation = Conversation(self.next_id("c"), agent_url, transport, version)
        self.conversations[conversation.id] = conversation
        return conversation

    def open_turn(
        self,
        conversation: Conversation,
        asked: Json,
        task_id: str | None = None,
        secrets: tuple[str, ...] = (),
    ) -> Turn:
        """A turn of the conversation after what the user `asked` (`{"message": ...}` sent,
        or `{"cancel": task id}`); with `task_id`, a turn of that task from the start; the
        `secrets` it sends are hidden in all that is recorded from now on."""
        self.secrets.extend(secret for secret in secrets if secret not in self.secrets)
        turn = Turn(self.next_id("t"), conversation.id, task_id=task_id, cancel="cancel" in asked)
        self.turns[turn.id] = turn
        if task_id in self.tasks:
            self.tasks[task_id].turn_ids.append(turn.id)
        conversation.items.append({"role": "user", **asked, "at": time.time()})
        conversation.items.append({"turn": turn.id})
        self._publish_conversation(conversation)
        return turn

    def record(self, turn: Turn, kind: str, title: str, text: str) -> None:
        title, text = hide(title, self.secrets), hide(text, self.secrets)
        entry = WireEntry(len(turn.entries) + 1, kind, title, text)
        turn.entries.append(entry)
        data = {**entry.to_json(), "turn": turn.id, "task": turn.task_id,
                "conversation": turn.conversation_id}  # fmt: skip
        self._publish("entry", data)

    def observe(self, turn: Turn, event: StreamEvent) -> None:
        """Apply an event that came back in `turn` to its task and conversation."""
        conversation = self.conversations[turn.conversation_id]
        self.record(turn, "event", _event_title(event), clipped(event.to_json().decode()))
        if isinstance(event, Message) and (
            event.task_id is None or event.task_id not in self.tasks
        ):
            turn.message = event.to_wire()
            conversation.context_id = event.context_id or conversation.context_id
            self._publish_conversation(conversation)
            return
        task_id = event.id if isinstance(event, Task) else event.task_id
        view = self.tasks.get(task_id) if task_id is not None else None
        if view is None:
            view = TaskView(_task_of(event), conversation.agent_url, conversation.id)
            self.tasks[view.task.id] = view
        if _repeats_end(view.task, event):
            pass  # the end a cancel already applied, told again by the stream (or the reverse)
        elif view.task is not event:
            try:
                apply_event(view.task, event)
            except A2AError as exc:
                self.record(turn, "error", "illegal event", exc.message)
        if turn.id not in view.turn_ids:
            view.turn_ids.append(turn.id)
        view.trace_id = view.trace_id or turn.trace_id
        view.updated = time.time()
        turn.task_id = view.task.id
        turn.status = view.task.status.to_wire()
        if (
            isinstance(event, TaskArtifactUpdateEvent)
            and event.artifact.artifact_id not in turn.artifact_ids
        ):
            turn.artifact_ids.append(event.artifact.artifact_id)
        if isinstance(event, Task) and event.artifacts and not turn.artifact_ids:
            turn.artifact_ids = [
                a.artifact_id for a in event.artifacts if not _earlier(self, turn, a.artifact_id)
            ]
        conversation.context_id = view.task.context_id
        self._publish("task", view.summary())
        self._publish_conversation(conversation)

    def finish_turn(self, turn: Turn, error: str | None = None) -> None:
        turn.done, turn.error = True, error
        if error is not None:
            self.record(turn, "error", "error", error)
        self._publish_conversation(self.conversations[turn.conversation_id])

    def waiting_task(self, conversation: Conversation) -> str | None:
        """The task the conversation's next message continues: its last, if waiting for input."""
        for item in reversed(conversation.items):
            turn = self.turns.get(item.get("turn", ""))
            if turn is not None and turn.task_id is not None:
                view = self.tasks[turn.task_id]
                return view.task.id if view.task.status.state.is_interrupted else None
        return None

    def _publish(self, name: str, data: Json) -> None:
        self.hub.publish(name, hidden(data, self.secrets))

    def _publish_conversation(self, conversation: Conversation) -> None:
        self._publish("conversation", conversation.to_json(self.turns))


def _task_of(event: StreamEvent) -> Task:
    """The task a stream's first event starts: the task itself, or (0.1 streams start with an
    update) what the update tells of it."""
    if isinstance(event, Task):
        return event
    return Task(
        id=event.task_id or "",
        context_id=event.context_id or "",
        status=TaskStatus(state=TaskState.SUBMITTED),
    )


def _repeats_end(task: Task, event: StreamEvent) -> bool:
    """Whether `event` tells of the terminal state `task` is already in."""
    state = task.status.state
    told = event.status.state if not isinstance(event, Message | TaskArtifactUpdateEvent) else None
    return state.is_terminal and told is state


def _earlier(state: UiState, turn: Turn, artifact_id: str) -> bool:
    """Whether an earlier turn of the same task already showed this artifact."""
    view = state.tasks.get(turn.task_id or "")
    return view is not None and any(
        artifact_id in state.turns[t].artifact_ids for t in view.turn_ids if t != turn.id
    )


def _event_title(event: StreamEvent) -> str:
    if isinstance(event, Task):
        return f"task {event.status.state.value}"
    if isinstance(event, TaskStatusUpdateEvent):
        return f"status-update {event.status.state.value}" + (" (final)" if event.final else "")
    if isinstance(event, TaskArtifactUpdateEvent):
        chunk = " append" if event.append else ""
        last = " last chunk" if event.last_chunk else ""
        return f"artifact-update {event.artifact.name or event.artifact.artifact_id}{chunk}{last}"
    return f"message from {event.role.value}"
