"""Ticker: streams `tick 1` … `tick N` as lines of one artifact, one every 100 ms.

The message text is N, from 1 to 1,000 (default 10); another number is rejected. Used to
watch streaming, replay and recovery at work; `restartable_agent` is the same agent declared
safe to run again after a crash.
"""

import asyncio
from collections.abc import AsyncIterator

import accord
from accord.types import Message, Role, TaskState, TaskStatus, TextPart, new_id

INTERVAL = 0.1
MAX_TICKS = 1000


async def ticks(context: accord.RequestContext) -> AsyncIterator[str | TaskStatus]:
    text = context.text.strip()
    if not text.isdigit():  # any other text: the default count
        count = 10
    elif text.isascii() and len(text) <= 4 and 1 <= int(text) <= MAX_TICKS:
        count = int(text)
    else:
        reason = f"I count from 1 to {MAX_TICKS}; send a number in that range, not {text[:20]!r}."
        yield TaskStatus(state=TaskState.REJECTED, message=_said(context, reason))
        return
    for tick in range(1, count + 1):
        await asyncio.sleep(INTERVAL)
        yield f"tick {tick}\n"


def _said(context: accord.RequestContext, text: str) -> Message:
    return Message(
        message_id=new_id(),
        role=Role.AGENT,
        parts=[TextPart(text=text)],
        task_id=context.task_id,
        context_id=context.context_id,
    )


agent = accord.agent(
    ticks, name="Ticker", description="Counts to N (your message), one tick every 100 ms."
)

restartable_agent = accord.agent(
    ticks,
    name="Ticker (restartable)",
    description="Counts to N; if its server dies, another replica counts again from 1.",
    restartable=True,
)
