"""The accord agent of the streaming benchmarks: for "COUNT [DELAY]", waits, then streams chunks."""

import asyncio
from collections.abc import AsyncIterator

import accord


@accord.agent(name="Chunks", description="Streams COUNT one-letter chunks of one artifact.")
async def agent(context: accord.RequestContext) -> AsyncIterator[str]:
    count, _, delay = context.text.partition(" ")
    if delay:
        await asyncio.sleep(float(delay))
    for _ in range(int(count)):
        yield "x"
