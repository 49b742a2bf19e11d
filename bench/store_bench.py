"""Store benchmark: completed echo tasks per second through accord's service and runtime, no HTTP.

Run as `store_bench.py STORE SECONDS` (STORE: memory, sqlite or postgresql); prints one JSON line:
tasks_per_s, and cpu_us_per_task (the process's CPU time, all threads, per completed task: steadier
than the rate when other jobs share the CPU).
Stores come from `accord.store.open_store(url)`: SQLite in a new temporary file, PostgreSQL in a
database `accord_bench` dropped and created again for each run. Without `open_store` only the
memory store is measured and the SQL rows say "n/a".
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
import tempfile
import time
import uuid
from typing import Any

import accord.store
from accord.core.call_context import CallContext
from accord.runtime import TaskRuntime
from accord.samples.echo import agent
from accord.server.service import A2AService
from accord.types import MessageSendParams, Task, TaskState

CONCURRENCY = 50
WARMUP_SECONDS = 1.0
POSTGRES_SERVER = os.environ.get("BENCH_POSTGRES_SERVER", "postgresql://postgres@127.0.0.1:5432")
POSTGRES_DATABASE = "accord_bench"


async def fresh_postgres_database() -> str:
    """Drop and create the benchmark's own database; its URL."""
    import asyncpg  # the `postgres` extra, in the project's dev install

    admin = await asyncpg.connect(f"{POSTGRES_SERVER}/postgres")
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {POSTGRES_DATABASE} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {POSTGRES_DATABASE}")
    finally:
        await admin.close()
    return f"{POSTGRES_SERVER}/{POSTGRES_DATABASE}"


async def make_store(kind: str, directory: str) -> accord.store.TaskStore | None:
    """The store to measure, opened; None when accord has no SQL stores yet."""
    open_store = getattr(accord.store, "open_store", None)
    if open_store is None:
        return accord.store.InMemoryTaskStore() if kind == "memory" else None
    if kind == "memory":
        url = "memory"
    elif kind == "sqlite":
        url = f"sqlite:///{directory}/bench.db"
    else:
        url = await fresh_postgres_database()
    store = open_store(url)
    opener = getattr(store, "open", None)
    if opener is not None and inspect.iscoroutinefunction(opener):
        await opener()
    return store


def params() -> MessageSendParams:
    message = {"kind": "message", "messageId": str(uuid.uuid4()), "role": "user"}
    message["parts"] = [{"kind": "text", "text": "hello"}]  # type: ignore[assignment]
    return MessageSendParams.model_validate({"message": message})


async def measure(store: accord.store.TaskStore, seconds: float) -> dict[str, Any]:
    service = A2AService(agent, TaskRuntime(agent.executor, store=store))
    call = CallContext(base_url="http://127.0.0.1/")
    counting = False
    completed = 0
    deadline = time.perf_counter() + WARMUP_SECONDS + seconds

    async def worker() -> None:
        nonlocal completed
        while time.perf_counter() < deadline:
            result = await service.send_message(params(), call)
            if counting and isinstance(result, Task):
                completed += result.status.state is TaskState.COMPLETED

    workers = [asyncio.create_task(worker()) for _ in range(CONCURRENCY)]
    await asyncio.sleep(WARMUP_SECONDS)
    counting, started, cpu_started = True, time.perf_counter(), time.process_time()
    await asyncio.gather(*workers)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return {
        "status": "ok",
        "tasks_per_s": completed / elapsed,
        "cpu_us_per_task": round(cpu / max(completed, 1) * 1e6),
    }


async def main(kind: str, seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        try:
            store = await make_store(kind, directory)
        except Exception as exc:  # a backend that exists but cannot start: say why
            return {"status": f"error: {type(exc).__name__}: {exc}"}
        if store is None:
            return {"status": "n/a (not in accord.store yet)"}
        try:
            return await measure(store, seconds)
        finally:
            await store.close()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], float(sys.argv[2])))))
