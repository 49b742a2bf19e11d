"""AgentBinding: a store keeps the tasks of one agent, named on its first use."""

from __future__ import annotations

from accord.store.stored import StoreOfAnotherAgent


class AgentBinding:
    """The name of the agent whose tasks a store keeps (the default holds it in memory)."""

    _agent: str | None = None

    async def bind_agent(self, agent: str) -> None:
        """Keep the tasks of the agent named `agent` here: the store records the name when it
        keeps no agent's tasks yet, and raises StoreOfAnotherAgent when it keeps another's
        (replicas of one agent share a name, so they share the store)."""
        recorded = await self.recorded_agent(agent)
        if recorded != agent:
            raise StoreOfAnotherAgent(recorded, agent)

    async def recorded_agent(self, agent: str) -> str:
        """The agent whose tasks the store keeps, `agent` when it kept nobody's (recorded now)."""
        if self._agent is None:
            self._agent = agent
        return self._agent
