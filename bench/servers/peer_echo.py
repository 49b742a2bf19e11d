"""The official a2a-sdk (1.3.0) echo agents, written the way that SDK's helloworld sample is."""

import asyncio

from a2a.helpers import (
    get_message_text,
    new_task_from_user_message,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette


class EchoTaskExecutor(AgentExecutor):
    """Answers with a task: working, one artifact holding the text, completed."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue=event_queue, task_id=task.id, context_id=task.context_id)
        await updater.start_work()
        await updater.add_artifact(parts=[new_text_part(text=get_message_text(context.message))])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("cancel is not supported")


class EchoMessageExecutor(AgentExecutor):
    """Answers with a message repeating the text."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = get_message_text(context.message)
        await event_queue.enqueue_event(new_text_message(text, context_id=context.context_id))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("cancel is not supported")


class ChunksExecutor(AgentExecutor):
    """For "COUNT [DELAY]": waits DELAY seconds, streams COUNT artifact chunks, completes."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        count, _, delay = get_message_text(context.message).partition(" ")
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue=event_queue, task_id=task.id, context_id=task.context_id)
        await updater.start_work()
        if delay:
            await asyncio.sleep(float(delay))
        for i in range(int(count)):
            parts = [new_text_part(text="x")]
            await updater.add_artifact(parts=parts, artifact_id="chunks", append=i > 0)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("cancel is not supported")


def build_app(
    executor: AgentExecutor,
    name: str,
    interface: AgentInterface | None = None,
) -> Starlette:
    """A Starlette app serving `executor` over JSON-RPC (1.0, and 0.3 in compat mode); its
    card lists `interface` (by default a JSON-RPC one of no version, at port 9999)."""
    skill = AgentSkill(
        id="echo",
        name="Echo",
        description="Repeats what you say.",
        input_modes=["text/plain"],
        output_modes=["text/plain"],
        tags=["echo"],
    )
    card = AgentCard(
        name=name,
        description="Repeats what you say.",
        version="1.0.0",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=True),
        supported_interfaces=[
            interface or AgentInterface(protocol_binding="JSONRPC", url="http://127.0.0.1:9999")
        ],
        skills=[skill],
    )
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = create_agent_card_routes(card)
    routes.extend(create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True))
    return Starlette(routes=routes)


task_app = build_app(EchoTaskExecutor(), "Echo")
message_app = build_app(EchoMessageExecutor(), "Echo (message)")
chunks_app = build_app(ChunksExecutor(), "Chunks")
