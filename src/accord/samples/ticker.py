"""Ticker: streams `tick 1` … `tick N` as lines of one artifact, one every 100 ms.

The message text is N (default 10). Used to watch streaming, replay and recovery at work;
`restartable_agent` is the same agent declared safe to run again after a crash.
"""

import asyncio
from collections.abc import AsyncIterator

import accord

INTERVAL = 0.1


async def ticks(context: accord.RequestContext) -> AsyncIterator[str]:
    text = context.text.strip()
    count = int(text) if text.isdigit() else 10
    for tick in range(1, count + 1):
        await asyncio.sleep(INTERVAL)
        yield f"tick {tick}\n"


agent = accord.agent(
    ticks, name="Ticker", description="Counts to N (your message), one tick every 100 ms."
)

restartable_agent = accord.agent(
    ticks,
    name="Ticker (restartable)",
    description="Counts to N; if its server dies, another replica counts again from 1.",
    restartable=True,
)
