"""The host delegating to an agent built with the official a2a-sdk: a question relayed, a result."""

from __future__ import annotations

from pathlib import Path

import pytest
from a2a.helpers import get_message_text, new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part

from accord import Client, create_app
from accord.host import AgentRegistry, host_agent
from accord.host.delegation import HOST_METADATA
from accord.types import TaskState
from agents_for_tests import SAFETY_TIMEOUT
from rpc import served
from sample_servers import artifact_updates, finished, follow, statuses
from test_interop_official_server import official_server


class OfficialGreeter(AgentExecutor):
    """Written the SDK's way: asks for a name (input-required), then echoes a greeting as an
    artifact and completes."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue=event_queue, task_id=task.id, context_id=task.context_id)
        await updater.start_work()
        if context.current_task is None:
            question = updater.new_agent_message([Part(text="Whom shall I echo a greeting to?")])
            await updater.requires_input(question)
            return
        name = get_message_text(context.message)
        await updater.add_artifact([Part(text=f"Hello, {name}!")], name="greeting")
        await updater.complete(updater.new_agent_message([Part(text="Greeted.")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


@pytest.mark.parametrize(
    "interface", [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")], ids="-".join
)
async def test_the_host_relays_an_official_agents_question_and_gathers_its_result(
    tmp_path: Path, interface: tuple[str, str]
) -> None:
    with official_server(OfficialGreeter()) as official:
        official.list_interface(*interface)
        registry = AgentRegistry(tmp_path / "agents.json", [official.url])
        [known] = await registry.agents()
        assert known.name == "Official echo"
        with served(create_app(host_agent(registry))) as url:
            async with Client(url, timeout=SAFETY_TIMEOUT) as client:
                first = await follow(client, "echo a greeting")
                task_id = first[0].id  # type: ignore[union-attr]
                assert statuses(first)[-1] == (
                    TaskState.INPUT_REQUIRED,
                    "Official echo asks: Whom shall I echo a greeting to?",
                )
                second = await follow(client, "Ada", task_id=task_id)
                assert statuses(second)[-1] == (TaskState.COMPLETED, "Official echo: Greeted.")
                [greeting] = artifact_updates(second)
                assert greeting.artifact.text == "Hello, Ada!"
                assert greeting.artifact.name == "Official echo: greeting"
                assert greeting.artifact.metadata is not None
                assert greeting.artifact.metadata[HOST_METADATA]["url"] == official.url
                finished(await client.get_task(task_id))
