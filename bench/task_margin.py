"""How much of a Task-mode send is the task's data itself, against a Message-mode send.

`python bench/task_margin.py [--requests N]`: in one process, the CPU time of a JSON-RPC 0.3
`message/send` in Message mode and in Task mode (`bench/per_request.py`'s loads, the ASGI app
called without a socket), and of the work on the canonical models that a Task-mode send
cannot do without: the echo agent's executor run, its events (made by the agents API) each
serialized once and applied to a new task by the state machine, and the task serialized as
created and as ended.
No lock, store, bus or HTTP is in that last figure; it is a floor under what a task adds.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable

from per_request import LOADS, Client

import accord.store
from accord.agents import RequestContext
from accord.runtime.state_machine import TaskChange, apply_event, new_task
from accord.samples import echo
from accord.types import Message, Role, Task, TextPart, new_id


class _Applied:
    """An event sink doing to the task's data what the runtime does, and nothing else."""

    def __init__(self, context: RequestContext) -> None:
        self.task: Task = new_task(context.task_id, context.context_id, context.message)
        self.task.to_json()  # the created task's record

    async def send(self, event: TaskChange) -> None:
        event.to_json()
        apply_event(self.task, event)


async def _task_data() -> None:
    message = Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text="hello")])
    context = RequestContext(message=message, task_id=new_id(), context_id=new_id())
    sink = _Applied(context)
    await echo.agent.executor.execute(context, sink)
    sink.task.to_json()  # the ended task: its store's JSON and the reply


async def _cpu(call: Callable[[], Awaitable[None]], requests: int) -> float:
    for _ in range(requests // 10):
        await call()
    started = time.process_time()
    for _ in range(requests):
        await call()
    return (time.process_time() - started) / requests * 1e6


async def _send(load: str, requests: int) -> float:
    agent, path, body, version = LOADS[load]
    app = accord.create_app(agent, store=accord.store.open_store("memory"))
    async with app.router.lifespan_context(app):
        return await _cpu(Client(app, path, body, version).call, requests)


async def measure(requests: int) -> None:
    message = await _send("rpc-0.3-message", requests)
    task = await _send("rpc-0.3", requests)
    data = await _cpu(_task_data, requests)
    print(f"Message-mode send      {message:7.1f} µs/request (CPU)")
    print(f"Task-mode send         {task:7.1f} µs/request ({task / message:.0%} of Message mode)")
    print(f"the task's data alone  {data:7.1f} µs/request ({data / message:.0%} of Message mode)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000)
    asyncio.run(measure(parser.parse_args().requests))


if __name__ == "__main__":
    main()
