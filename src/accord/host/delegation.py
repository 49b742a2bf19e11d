"""One remote task the host follows: a message sent, its events relayed into the host's task."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from accord.agents import TaskUpdater
from accord.client import Client, Credentials
from accord.errors import A2AError
from accord.host.registry import RemoteAgent
from accord.types import (
    AgentCard,
    Artifact,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    new_id,
)

log = logging.getLogger(__name__)

HOST_METADATA = "accord.host"
"""Metadata key naming the remote agent (and task) behind a status message or artifact."""

SUCCEEDED = frozenset({TaskState.COMPLETED})
SUMMARY_LIMIT = 500
"""At most this many characters of each agent's answer in the host's final message."""


@dataclass(slots=True)
class Delegation:
    """What the host asked one remote agent, and how far that agent's task has got.

    Saved with the host's task while it waits for the user (`to_json`), so the answer can
    go back to the same remote task.
    """

    url: str
    name: str
    request: str
    task_id: str | None = None
    context_id: str | None = None
    state: TaskState | None = None
    question: Message | None = None
    """The remote status message while its task waits for input (or authentication)."""
    outcome: str = ""
    """What the agent said when it finished (or why it could not)."""
    artifact_texts: list[str] = field(default_factory=list)

    @property
    def waiting(self) -> bool:
        return self.state is not None and self.state.is_interrupted

    @property
    def settled(self) -> bool:
        return self.state is not None and (self.state.is_terminal or self.state.is_interrupted)

    @property
    def succeeded(self) -> bool:
        return self.state in SUCCEEDED

    def origin(self) -> dict[str, Any]:
        """Which agent and remote task something came from (as metadata)."""
        origin: dict[str, Any] = {"agent": self.name, "url": self.url}
        if self.task_id:
            origin["taskId"] = self.task_id
        if self.state is not None:
            origin["state"] = self.state.value
        return origin

    def summary(self) -> str:
        said = shortened(self.outcome or "; ".join(self.artifact_texts))
        if self.succeeded:
            return f"{self.name}: {said or 'done.'}"
        state = self.state.value if self.state is not None else "not reached"
        return f"{self.name} ({state}): {said or 'no reason given.'}"

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "name": self.name,
            "request": self.request,
            "taskId": self.task_id,
            "contextId": self.context_id,
            "state": self.state.value if self.state is not None else None,
            "question": self.question.model_dump(mode="json", by_alias=True, exclude_none=True)
            if self.question is not None
            else None,
            "outcome": self.outcome,
            "artifactTexts": self.artifact_texts,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Delegation:
        """A delegation saved by `to_json` (ValueError, KeyError or TypeError when it is not)."""
        question = data.get("question")
        state = data.get("state")
        return cls(
            url=str(data["url"]),
            name=str(data["name"]),
            request=str(data.get("request", "")),
            task_id=data.get("taskId"),
            context_id=data.get("contextId"),
            state=TaskState(state) if state else None,
            question=Message.model_validate(question) if question else None,
            outcome=str(data.get("outcome", "")),
            artifact_texts=[str(text) for text in data.get("artifactTexts", [])],
        )


def shortened(text: str, limit: int = SUMMARY_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def delegation_for(agent: RemoteAgent, request: str) -> Delegation:
    return Delegation(url=agent.url, name=agent.name, request=request)


class Relay:
    """Sends one message to a delegation's agent and relays what comes back into the host's
    task (through `host`): progress as `working` status updates naming the agent, artifacts
    under the host's task with the agent in their name and metadata. Never raises for
    anything the remote agent does: a failure becomes the delegation's state and outcome."""

    def __init__(
        self,
        host: TaskUpdater,
        delegation: Delegation,
        card: AgentCard | None = None,
        *,
        depth: int = 1,
        credentials: Credentials | None = None,
    ) -> None:
        self.host = host
        self.delegation = delegation
        self.card = card
        self.credentials = credentials
        self.depth = depth
        """How many hosts the message has passed through, counting this one (sent along)."""
        self.quiet = False
        """Set when the host's task is canceled: nothing more is relayed into it."""

    async def send(self, parts: list[Part]) -> None:
        delegation = self.delegation
        message = Message(
            message_id=new_id(),
            role=Role.USER,
            parts=parts,
            task_id=delegation.task_id,
            context_id=delegation.context_id,
            metadata={HOST_METADATA: {"depth": self.depth}},
        )
        delegation.question = None
        try:
            remote = Client(delegation.url, card=self.card, credentials=self.credentials)
            async with remote as client:
                card = await client.get_card()
                if card.capabilities.streaming:
                    async with client.stream(message) as events:
                        async for event in events:
                            await self.relay(event)
                else:
                    await self.relay(await client.send(message))
                if not delegation.settled and delegation.task_id is not None:
                    # The stream ended early (a dropped connection): ask where the task is.
                    await self.relay(await client.get_task(delegation.task_id))
        except A2AError as exc:
            delegation.state = TaskState.FAILED
            delegation.outcome = f"{delegation.name} answered with an error: {exc.message}"
            await self.say(delegation.outcome)
            return
        except Exception as exc:  # a remote agent must never bring the host down
            log.info("host: %s failed: %s", delegation.url, exc, exc_info=True)
            delegation.state = TaskState.FAILED
            delegation.outcome = f"could not talk to {delegation.name} at {delegation.url}: {exc}"
            await self.say(delegation.outcome)
            return
        if not delegation.settled:
            state = delegation.state.value if delegation.state is not None else "unknown"
            delegation.outcome = f"the task stopped answering while {state}"
            delegation.state = TaskState.FAILED
            await self.say(f"{delegation.name}: {delegation.outcome}")

    async def relay(self, event: StreamEvent) -> None:
        delegation = self.delegation
        if isinstance(event, Message):  # a plain reply: no remote task
            delegation.state = TaskState.COMPLETED
            delegation.outcome = event.text
            others: list[Part] = [part for part in event.parts if not isinstance(part, TextPart)]
            if others:
                reply = Artifact(artifact_id=event.message_id, parts=others, name="reply")
                await self.artifact(reply)
            await self.say(f"{delegation.name} answered.")
        elif isinstance(event, Task):
            delegation.task_id, delegation.context_id = event.id, event.context_id
            for artifact in event.artifacts or ():
                await self.artifact(artifact)
            await self.status(event.status, announce=False)
        elif isinstance(event, TaskStatusUpdateEvent):
            delegation.task_id = delegation.task_id or event.task_id
            delegation.context_id = delegation.context_id or event.context_id
            await self.status(event.status, announce=True)
        elif isinstance(event, TaskArtifactUpdateEvent):
            await self.artifact(event.artifact, append=bool(event.append), last=event.last_chunk)

    async def status(self, status: TaskStatus, *, announce: bool) -> None:
        delegation = self.delegation
        delegation.state = status.state
        text = status.message.text if status.message is not None else ""
        if status.state.is_interrupted:
            delegation.question = status.message
        elif status.state.is_terminal:
            delegation.outcome = text
            said = f": {text}" if text else "."
            await self.say(f"{delegation.name} {status.state.value}{said}")
        elif announce and text:
            await self.say(f"{delegation.name}: {text}")

    async def artifact(
        self, artifact: Artifact, *, append: bool = False, last: bool | None = None
    ) -> None:
        delegation = self.delegation
        if self.quiet:
            return
        if not append and artifact.text and artifact.text not in delegation.artifact_texts:
            delegation.artifact_texts.append(artifact.text)
        named = f"{delegation.name}: {artifact.name}" if artifact.name else delegation.name
        await self.host.add_artifact(
            artifact.parts,
            artifact_id=f"{delegation.task_id or delegation.url}/{artifact.artifact_id}",
            name=named,
            description=artifact.description,
            append=append,
            last_chunk=last,
            metadata={**(artifact.metadata or {}), HOST_METADATA: delegation.origin()}
            if not append
            else None,
        )

    async def say(self, text: str) -> None:
        """A `working` status update of the host's task, naming the agent in its metadata."""
        if self.quiet:
            return
        message = self.host.agent_message(text, metadata={HOST_METADATA: self.delegation.origin()})
        await self.host.update_status(TaskState.WORKING, message)
