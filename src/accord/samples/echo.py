"""Echo agents: `agent` answers with a task, `message_agent` with a plain message."""

from collections.abc import AsyncIterator

import accord
from accord.extensions import TimingExtension


@accord.agent(
    name="Echo",
    description="Repeats what you say, as a task with one artifact.",
    extensions=[TimingExtension()],
)
async def agent(context: accord.RequestContext) -> AsyncIterator[str]:
    yield context.text


@accord.agent(
    name="Echo (message)",
    description="Repeats what you say in a message.",
    extensions=[TimingExtension()],
)
async def message_agent(context: accord.RequestContext) -> str:
    return context.text
