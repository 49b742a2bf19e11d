"""How much of a Task-mode send is the task's data itself, against a Message-mode send.

`python bench/task_margin.py [--requests N] [--rounds R] [--only PART]`: in one process, the
CPU time of a JSON-RPC 0.3 `message/send` in Message mode and in Task mode (the loads of
`bench/per_request.py`: the ASGI app called without a socket), and of the work on the
canonical models that a Task-mode send cannot do without (`data`): the echo agent's executor
run, its events (made by the agents API) each serialized once and applied to a new task by the
state machine, and the task serialized as created and as ended. No lock, store, bus or HTTP is
in `data`: it is a floor under what a task adds to a send.

The three are measured in turns, R times each, and the medians printed. For figures that do
not move with the host, count instructions as `bench/instructions.sh` does, one part at a time:
`valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/task_margin.py
--only data --rounds 1 --requests N`, for two N, the difference over the difference in N.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack

from per_request import LOADS, Client

import accord.store
from accord.agents import RequestContext
from accord.runtime.state_machine import TaskChange, apply_event, new_task
from accord.samples import echo
from accord.types import Message, Role, Task, TextPart, new_id

PARTS = {"message": "rpc-0.3-message", "task": "rpc-0.3", "data": None}
WARMUP = 200  # calls before each measured round
_MESSAGE = Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text="hello")])


class _Applied:
    """An event sink doing to the task's data what the runtime does, and nothing else."""

    def __init__(self, context: RequestContext) -> None:
        self.task: Task = new_task(context.task_id, context.context_id, context.message)
        self.task.to_json()  # the created task's record

    async def send(self, event: TaskChange) -> None:
        event.to_json()
        apply_event(self.task, event)


async def _task_data() -> None:
    context = RequestContext(message=_MESSAGE, task_id=new_id(), context_id=new_id())
    sink = _Applied(context)
    await echo.agent.executor.execute(context, sink)
    sink.task.to_json()  # the ended task: its store's JSON and the reply


async def _cpu(call: Callable[[], Awaitable[None]], requests: int) -> float:
    started = time.process_time()
    for _ in range(requests):
        await call()
    return (time.process_time() - started) / requests * 1e6


async def measure(parts: list[str], requests: int, rounds: int) -> dict[str, float]:
    """The median CPU µs per call of each part: measured in turns, each time after WARMUP
    calls, so that the host's changes of speed move all of them alike."""
    calls: dict[str, Callable[[], Awaitable[None]]] = {}
    async with AsyncExitStack() as apps:
        for part in parts:
            load = PARTS[part]
            if load is None:
                calls[part] = _task_data
                continue
            agent, path, body, version = LOADS[load]
            app = accord.create_app(agent, store=accord.store.open_store("memory"))
            await apps.enter_async_context(app.router.lifespan_context(app))
            calls[part] = Client(app, path, body, version).call
        spent: dict[str, list[float]] = {part: [] for part in parts}
        for _ in range(rounds):
            for part, call in calls.items():
                await _cpu(call, WARMUP)
                spent[part].append(await _cpu(call, requests))
    return {part: statistics.median(figures) for part, figures in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="per round and part")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=sorted(PARTS), help="measure this part alone")
    args = parser.parse_args()
    parts = [args.only] if args.only else list(PARTS)
    spent = asyncio.run(measure(parts, args.requests, args.rounds))
    message = spent.get("message")
    for part, figure in spent.items():
        share = f" ({figure / message:.0%} of a Message-mode send)" if message else ""
        print(f"{part:8} {figure:7.1f} µs/call (CPU, median of {args.rounds}){share}")


if __name__ == "__main__":
    main()
