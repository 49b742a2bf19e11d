"""SSE benchmarks over raw asyncio sockets: artifact-chunk throughput and idle-stream memory."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass

from common import HOST, RunningServer, resubscribe_body, send_body, version_headers

ARTIFACT = b"artifact-update"  # appears once in every artifact event (0.3 `kind`)
DATA = b"data: "
SUBSCRIBE_DELAY = 0.5  # seconds the agent waits before its first chunk, so resubscribers attach


async def _open_sse(port: int, body: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """POST a 0.3 streaming call; the server closes the connection after the last event."""
    reader, writer = await asyncio.open_connection(HOST, port)
    head = ["POST / HTTP/1.1", f"Host: {HOST}:{port}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in version_headers("0.3").items()]
    head.append(f"Content-Length: {len(body)}")
    writer.write("\r\n".join(head).encode() + b"\r\n\r\n" + body)
    return reader, writer


async def _first_event(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """The JSON of the first SSE event, and whatever was read after it."""
    buffer = b""
    while True:
        start = buffer.find(DATA)
        end = buffer.find(b"\n", start) if start >= 0 else -1
        if end >= 0:
            return buffer[start + len(DATA) : end], buffer[end:]
        chunk = await reader.read(65536)
        if not chunk:
            raise ConnectionError(f"stream ended before its first event: {buffer[:300]!r}")
        buffer += chunk


async def _count_artifacts(reader: asyncio.StreamReader, already: bytes) -> int:
    """Read a stream to its end, counting artifact events."""
    count = already.count(ARTIFACT)
    carry = already[-(len(ARTIFACT) - 1) :]
    while chunk := await reader.read(65536):
        window = carry + chunk
        count += window.count(ARTIFACT)
        carry = window[-(len(ARTIFACT) - 1) :]
    return count


async def _one_task(port: int, chunks: int, subscribers: int) -> tuple[int, float]:
    """Stream one task of `chunks` chunks to `subscribers`: (artifact events received, seconds).

    The time runs from the request (plus the agent's wait for resubscribers) to the end of the
    last stream: an agent may emit every chunk before the first one reaches the socket.
    """
    wait = SUBSCRIBE_DELAY if subscribers > 1 else 0.0
    text = f"{chunks} {wait}" if wait else str(chunks)
    started = time.perf_counter() + wait
    reader, writer = await _open_sse(port, send_body("0.3", text, stream=True))
    first, rest = await _first_event(reader)
    task_id = json.loads(first)["result"]["id"]
    followers = [await _open_sse(port, resubscribe_body(task_id)) for _ in range(subscribers - 1)]
    try:
        received = await asyncio.gather(
            _count_artifacts(reader, rest), *(_count_artifacts(r, b"") for r, _ in followers)
        )
    finally:
        for w in [writer, *(w for _, w in followers)]:
            w.close()
    return sum(received), time.perf_counter() - started


@dataclass(frozen=True)
class StreamResult:
    events_per_s: float  # artifact events delivered per second of streaming (all subscribers)
    cpu_us_per_event: float  # server CPU time per delivered event
    delivered: int
    expected: int


def stream_chunks(
    server: RunningServer, chunks: int, subscribers: int, repetitions: int, timeout: float
) -> StreamResult:
    """Run `repetitions` tasks of `chunks` chunks each, every one followed by `subscribers`."""

    async def all_runs() -> tuple[int, float]:
        delivered, seconds = 0, 0.0
        for _ in range(repetitions):
            got, took = await _one_task(server.port, chunks, subscribers)
            delivered, seconds = delivered + got, seconds + took
        return delivered, seconds

    cpu_before = server.cpu_seconds()
    delivered, seconds = asyncio.run(asyncio.wait_for(all_runs(), timeout))
    cpu = server.cpu_seconds() - cpu_before
    return StreamResult(
        events_per_s=delivered / seconds if seconds else 0.0,
        cpu_us_per_event=cpu * 1e6 / delivered if delivered else 0.0,
        delivered=delivered,
        expected=chunks * subscribers * repetitions,
    )


@dataclass(frozen=True)
class MemoryResult:
    rss_mib: float  # server RSS with every stream open
    baseline_mib: float  # server RSS before opening them
    open_streams: int

    @property
    def kib_per_stream(self) -> float:
        return (self.rss_mib - self.baseline_mib) * 1024 / max(self.open_streams, 1)


def idle_streams(server: RunningServer, count: int, timeout: float) -> MemoryResult:
    """Open `count` SSE streams whose tasks then wait silently; measure the server's RSS."""

    async def measure() -> MemoryResult:
        baseline = server.rss_kib() / 1024
        gate = asyncio.Semaphore(200)  # connections being set up at once
        writers: list[asyncio.StreamWriter] = []

        async def open_one() -> None:
            async with gate:
                reader, writer = await _open_sse(
                    server.port, send_body("0.3", "0 3600", stream=True)
                )
                writers.append(writer)
                await _first_event(reader)

        try:
            results = await asyncio.gather(
                *(open_one() for _ in range(count)), return_exceptions=True
            )
            await asyncio.sleep(1.0)
            opened = sum(1 for r in results if not isinstance(r, BaseException))
            return MemoryResult(server.rss_kib() / 1024, baseline, opened)
        finally:
            for writer in writers:
                writer.close()

    return asyncio.run(asyncio.wait_for(measure(), timeout))
