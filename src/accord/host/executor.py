"""HostExecutor: plans a request over the known agents, delegates, relays questions, gathers."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

import accord
from accord.agents import EventSink
from accord.client import Client, Credentials
from accord.host.delegation import HOST_METADATA, Delegation, Relay, delegation_for
from accord.host.forwarding import forwarding
from accord.host.planning import plan
from accord.host.registry import AgentRegistry, RemoteAgent
from accord.types import Part, Task, TaskState, TextPart

log = logging.getLogger(__name__)

LIST_AGENTS = re.compile(
    r"^\s*(?:(?:list|show)(?: the| your)? agents|(?:which|what) agents(?: do you know| are there)?"
    r"|agents|help)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
CANCEL_TIMEOUT = 10.0
MAX_DEPTH = 3
"""How many hosts a request may pass through in a row (a host delegating to a host ...)."""


def host_depth(context: accord.RequestContext) -> int:
    """How many hosts the incoming message has passed through (0: it comes from a user)."""
    sent = (context.message.metadata or {}).get(HOST_METADATA)
    depth = sent.get("depth") if isinstance(sent, dict) else None
    return depth if isinstance(depth, int) and depth > 0 else 0


def saved_delegations(task: Task | None) -> tuple[list[Delegation], int] | None:
    """The delegations a host task waiting for the user saved, and which one asked."""
    if task is None or not task.status.state.is_interrupted or task.status.message is None:
        return None
    saved = (task.status.message.metadata or {}).get(HOST_METADATA)
    if not isinstance(saved, dict) or "delegations" not in saved:
        return None
    try:
        delegations = [Delegation.from_json(item) for item in saved["delegations"]]
        asking = int(saved["asking"])
        delegations[asking]  # must name one of them
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        log.warning("host: the saved delegations of task %s are unusable: %s", task.id, exc)
        return None
    return delegations, asking


def question_parts(delegation: Delegation) -> list[Part]:
    """The remote agent's question, saying who asks (its data parts, e.g. forms, as they are)."""
    parts = list(delegation.question.parts) if delegation.question is not None else []
    verb = "needs you to sign in" if delegation.state is TaskState.AUTH_REQUIRED else "asks"
    if parts and isinstance(parts[0], TextPart):
        return [TextPart(text=f"{delegation.name} {verb}: {parts[0].text}"), *parts[1:]]
    return [TextPart(text=f"{delegation.name} {verb}:"), *parts]


def agent_list(agents: list[RemoteAgent]) -> str:
    if not agents:
        return "I know no agents yet. Add one with POST /host/agents or `accord host --agent URL`."
    lines = [
        f"- {agent.name} ({agent.url}): {', '.join(s.name for s in agent.card.skills) or '-'}"
        for agent in agents
    ]
    return "I can ask these agents:\n" + "\n".join(lines)


@dataclass(slots=True)
class _Work:
    """The remote tasks a run of the host follows, and whether its task was canceled."""

    delegations: list[Delegation]
    relays: list[Relay]
    canceled: bool = False


class HostExecutor(accord.AgentExecutor):
    """Answers by delegating to the agents of `registry`, several at once when a request
    needs them; a remote question makes the host's task wait for the user, whose answer
    goes back to the agent that asked."""

    def __init__(self, registry: AgentRegistry) -> None:
        self.registry = registry
        self._running: dict[str, _Work] = {}

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        host = accord.TaskUpdater(context, events)
        saved = saved_delegations(context.task)
        if saved is not None:
            delegations, asking = saved
            await self.answer(host, context, delegations, delegations[asking])
            return
        depth = host_depth(context) + 1
        if depth > MAX_DEPTH:
            await host.reject(
                f"This request has already passed through {MAX_DEPTH} hosts; "
                "a host that knows itself (or a ring of hosts) would pass it on forever."
            )
            return
        agents = await self.registry.agents()
        if LIST_AGENTS.match(context.text):
            await events.send(host.agent_message(agent_list(agents)))
            return
        await host.start_work("Choosing agents")
        assignments = await plan(context.text, agents)
        if not assignments:
            await host.reject("None of the agents I know can help with that. " + agent_list(agents))
            return
        delegations = [delegation_for(a.agent, a.text) for a in assignments]
        asked = "; ".join(f"{a.agent.name} ({a.skill}): {a.text}" for a in assignments)
        plan_metadata = {
            HOST_METADATA: {"plan": [d.origin() | {"request": d.request} for d in delegations]}
        }
        await host.start_work(host.agent_message(f"Asking {asked}", metadata=plan_metadata))
        # Each agent gets its piece of the text and the files (and data) its card takes.
        cards = [a.agent.card for a in assignments]
        forwarded = forwarding([d.request for d in delegations], cards, context.message.parts)
        for refusal in forwarded.refused:
            await host.update_status(TaskState.WORKING, host.agent_message(refusal))
        relays = [
            Relay(host, d, card, depth=depth, credentials=self.credentials(d))
            for d, card in zip(delegations, cards, strict=True)
        ]
        sends = [relay.send(parts) for relay, parts in zip(relays, forwarded.parts, strict=True)]
        if await self.follow(context.task_id, delegations, relays, *sends):
            await self.conclude(host, delegations, forwarded.refused)

    async def follow(
        self,
        task_id: str,
        delegations: list[Delegation],
        relays: list[Relay],
        *sends: Coroutine[Any, Any, None],
    ) -> bool:
        """Run `sends` (the relays' messages) together; False when the host's task was
        canceled meanwhile (then there is nothing left to conclude)."""
        work = _Work(delegations, relays)
        self._running[task_id] = work
        try:
            await asyncio.gather(*sends)
        finally:
            self._running.pop(task_id, None)
        return not work.canceled

    async def answer(
        self,
        host: accord.TaskUpdater,
        context: accord.RequestContext,
        delegations: list[Delegation],
        asking: Delegation,
    ) -> None:
        """Send the user's answer to the agent that asked, follow it, then conclude."""
        await host.start_work(
            host.agent_message(
                f"Passing your answer to {asking.name}",
                metadata={HOST_METADATA: asking.origin()},
            )
        )
        depth = host_depth(context) + 1
        relay = Relay(host, asking, depth=depth, credentials=self.credentials(asking))
        sending = relay.send(list(context.message.parts))
        if await self.follow(context.task_id, delegations, [relay], sending):
            await self.conclude(host, delegations)

    async def conclude(
        self, host: accord.TaskUpdater, delegations: list[Delegation], notes: Sequence[str] = ()
    ) -> None:
        """Ask the user the first open question, or finish with what every agent said; `notes`
        (what the host could not pass on) end either."""
        said = [TextPart(text=note) for note in notes]
        for index, delegation in enumerate(delegations):
            if delegation.waiting:
                assert delegation.state is not None
                metadata: dict[str, Any] = {
                    HOST_METADATA: {
                        **delegation.origin(),
                        "asking": index,
                        "delegations": [d.to_json() for d in delegations],
                    }
                }
                question = host.agent_message(
                    [*question_parts(delegation), *said], metadata=metadata
                )
                await host.update_status(delegation.state, question)
                return
        summary = "\n".join([*(d.summary() for d in delegations), *notes])
        if any(d.succeeded for d in delegations):
            await host.complete(summary)
        else:
            await host.fail(summary)

    async def cancel(self, context: accord.RequestContext, events: EventSink) -> None:
        """Cancel the host's task, then the remote tasks it still has open (best effort)."""
        work = self._running.get(context.task_id)
        if work is not None:
            work.canceled = True
            for relay in work.relays:
                relay.quiet = True
            open_ones = [d for d in work.delegations if not d.settled or d.waiting]
        else:
            saved = saved_delegations(context.task)
            open_ones = [d for d in saved[0] if d.waiting] if saved else []
        # Canceled first: once the relays end, the run may return before this does.
        await accord.TaskUpdater(context, events).cancel()
        await asyncio.gather(*(cancel_remote(d, self.credentials(d)) for d in open_ones))

    def credentials(self, delegation: Delegation) -> Credentials | None:
        """What to present to the delegation's agent (as its registry entry says)."""
        return self.registry.credentials_for(delegation.url)


async def cancel_remote(delegation: Delegation, credentials: Credentials | None = None) -> None:
    """Best effort: a remote task that cannot be canceled is left to finish on its own."""
    if delegation.task_id is None:
        return
    try:
        remote = Client(delegation.url, credentials=credentials)
        async with asyncio.timeout(CANCEL_TIMEOUT), remote as client:
            await client.cancel_task(delegation.task_id)
    except Exception as exc:  # the host's cancel succeeds whatever the remote says
        log.warning("host: could not cancel %s at %s: %s", delegation.task_id, delegation.url, exc)
