"""Long-stream benchmark: one blocking send whose agent streams N chunks, per store, no HTTP.

Run as `long_stream.py STORE CHUNKS [CHUNK_BYTES]` (STORE: memory, sqlite or postgresql); prints
one JSON line: the send's seconds, microseconds per event (wall and the process's CPU time, all
threads) and the chunks the finished task holds; of a few sends when they are short, the
fastest. The agent yields CHUNKS text chunks of CHUNK_BYTES (default 8, a token of a language
model) as appends to one artifact, as quickly as the runtime takes them. Stores come from
`store_bench.make_store` (a fresh SQLite file, a fresh PostgreSQL database).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from store_bench import make_store

import accord
from accord.core.call_context import CallContext
from accord.runtime import TaskRuntime
from accord.server.service import A2AService
from accord.types import MessageSendParams, Task, TaskState

REPEAT_EVENTS = 20_000
"""Sends of fewer chunks repeat until they streamed about this many; the fastest counts."""


@accord.agent(name="Long stream", description="Streams COUNT chunks of SIZE bytes.")
async def agent(context: accord.RequestContext) -> AsyncIterator[str]:
    count, size = (int(word) for word in context.text.split())
    chunk = "x" * size
    for _ in range(count):
        yield chunk


def params(chunks: int, size: int) -> MessageSendParams:
    message = {"kind": "message", "messageId": str(uuid.uuid4()), "role": "user"}
    message["parts"] = [{"kind": "text", "text": f"{chunks} {size}"}]  # type: ignore[assignment]
    return MessageSendParams.model_validate({"message": message})


async def measure(store: accord.store.TaskStore, chunks: int, size: int) -> dict[str, Any]:
    """The fastest of a few sends (one for 10,000 chunks and more): short runs are noisy."""
    service = A2AService(agent, TaskRuntime(agent.executor, store=store))
    call = CallContext(base_url="http://127.0.0.1/")
    await service.send_message(params(10, size), call)  # warm-up: connections, statements
    runs = []
    for _ in range(max(1, REPEAT_EVENTS // chunks)):
        started, cpu_started = time.perf_counter(), time.process_time()
        result = await service.send_message(params(chunks, size), call)
        runs.append((time.perf_counter() - started, time.process_time() - cpu_started))
        assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED, result
    elapsed, cpu = min(runs)
    stored = await store.get(result.id)
    assert stored is not None and stored.task.artifacts is not None
    events = chunks + 3  # the new task, working, every chunk, completed
    return {
        "status": "ok",
        "runs": len(runs),
        "seconds": round(elapsed, 3),
        "us_per_event": round(elapsed / events * 1e6, 1),
        "cpu_us_per_event": round(cpu / events * 1e6, 1),
        "stored_chunks": len(stored.task.artifacts[0].parts),
    }


async def main(kind: str, chunks: int, size: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        store = await make_store(kind, directory)
        assert store is not None
        try:
            return await measure(store, chunks, size)
        finally:
            await store.close()


if __name__ == "__main__":
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    print(json.dumps(asyncio.run(main(sys.argv[1], int(sys.argv[2]), size))))
