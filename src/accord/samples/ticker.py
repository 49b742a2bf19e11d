"""Ticker: streams `tick 1` … `tick N` as chunks of one artifact, one every 100 ms.

The message text is N (default 10). Used to watch streaming, replay and recovery at work.
"""

import asyncio
from collections.abc import AsyncIterator

import accord

INTERVAL = 0.1


@accord.agent(name="Ticker", description="Counts to N (your message), one tick every 100 ms.")
async def agent(context: accord.RequestContext) -> AsyncIterator[str]:
    text = context.text.strip()
    count = int(text) if text.isdigit() else 10
    for tick in range(1, count + 1):
        await asyncio.sleep(INTERVAL)
        yield f"tick {tick}"
