"""A fleet's Redis bus work: the same load spread over R replica processes, entries each reads.

Every replica runs its share of the tasks, each publishing records at a steady rate with a
local subscriber (the stream of the client that started it, as `message/stream` has), and
follows a few tasks of other replicas (resubscribes landing elsewhere). Reported per R: the
entries a replica reads from Redis per second, what Redis itself spent (CPU seconds per
second, from INFO), and the records published per second in all.

    .venv/bin/python bench/bus_fleet.py [--replicas 2 4 8] [--rate 1000] [--seconds 10]

It uses only the bus's public API, so the same script measures any version of accord's
`RedisEventBus` (run it with that version's Python).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import time
from contextlib import nullcontext
from typing import Any

REDIS_URL = os.environ.get("ACCORD_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
TASKS_PER_REPLICA = 20
FOLLOWED_ELSEWHERE = 0.1
"""The share of a replica's tasks that a subscriber on another replica also follows."""


def replica(index: int, count: int, rate: float, seconds: float, prefix: str, out: Any) -> None:
    out.put(asyncio.run(_replica(index, count, rate, seconds, prefix)))


async def _replica(index: int, count: int, rate: float, seconds: float, prefix: str) -> Any:
    from accord.core.records import EventRecord
    from accord.runtime.redis_bus import RedisEventBus
    from accord.types import TaskState, TaskStatus, TaskStatusUpdateEvent

    bus = RedisEventBus(REDIS_URL, stream=prefix)
    await bus.start()
    read = [0]
    xread = bus._redis.xread  # type: ignore[union-attr]

    async def counting(streams: Any, **options: Any) -> Any:
        batches = await xread(streams, **options)
        for key, entries in batches or ():
            if b":replica:" not in key:
                read[0] += len(entries)
        return batches

    bus._redis.xread = counting  # type: ignore[union-attr, method-assign]
    own = [f"r{index}-t{n}" for n in range(TASKS_PER_REPLICA)]
    followed = [
        f"r{(index + 1) % count}-t{n}" for n in range(int(TASKS_PER_REPLICA * FOLLOWED_ELSEWHERE))
    ]
    running = getattr(bus, "running", lambda task: nullcontext())
    holds = [running(task) for task in own]
    for hold in holds:
        hold.__enter__()
    subscriptions = [bus.subscribe(task) for task in own + followed]
    await asyncio.sleep(1)  # every replica up before anyone publishes
    interval = TASKS_PER_REPLICA / (rate / count)
    published = 0
    start = time.monotonic()

    async def publish(task: str) -> None:
        nonlocal published
        seq = 0
        next_at = time.monotonic()
        while time.monotonic() - start < seconds:
            seq += 1
            event = TaskStatusUpdateEvent(
                task_id=task, context_id="c", status=TaskStatus(state=TaskState.WORKING)
            )
            await bus.publish(EventRecord.of(task, seq, event, final=False))
            published += 1
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))

    async def drain(subscription: Any) -> None:
        async for _record in subscription:
            pass

    drains = [asyncio.create_task(drain(s)) for s in subscriptions]
    await asyncio.gather(*(publish(task) for task in own))
    elapsed = time.monotonic() - start
    for task in drains:
        task.cancel()
    for hold in holds:
        hold.__exit__(None, None, None)
    await bus.close()
    return {"read_per_s": read[0] / elapsed, "published_per_s": published / elapsed}


async def redis_cpu() -> float:
    from redis.asyncio import Redis

    client = Redis.from_url(REDIS_URL)
    try:
        info = await client.info("cpu")
    finally:
        await client.aclose()
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def cleanup(prefix: str) -> None:
    from redis.asyncio import Redis

    client = Redis.from_url(REDIS_URL)
    try:
        keys = [key async for key in client.scan_iter(f"{prefix}*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


def fleet(count: int, rate: float, seconds: float) -> dict[str, float]:
    prefix = f"accord:bench:{os.getpid()}:{count}"
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    processes = [
        context.Process(target=replica, args=(i, count, rate, seconds, prefix, out))
        for i in range(count)
    ]
    cpu_before = asyncio.run(redis_cpu())
    wall = time.monotonic()
    for process in processes:
        process.start()
    results = [out.get() for _ in processes]
    for process in processes:
        process.join()
    wall = time.monotonic() - wall
    cpu = asyncio.run(redis_cpu()) - cpu_before
    asyncio.run(cleanup(prefix))
    return {
        "replicas": count,
        "read_per_replica_per_s": sum(r["read_per_s"] for r in results) / count,
        "published_per_s": sum(r["published_per_s"] for r in results),
        "redis_cpu_per_s": cpu / wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--rate", type=float, default=1000, help="records/s, the whole fleet")
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    rows = [fleet(count, args.rate, args.seconds) for count in args.replicas]
    print(json.dumps(rows, indent=1))
    print(f"{'replicas':>8} {'published/s':>12} {'read/replica/s':>15} {'redis cpu':>10}")
    for row in rows:
        print(
            f"{row['replicas']:>8} {row['published_per_s']:>12.0f}"
            f" {row['read_per_replica_per_s']:>15.0f} {row['redis_cpu_per_s']:>10.3f}"
        )


if __name__ == "__main__":
    main()
