"""accord: the Agent2Agent (A2A) protocol for Python — agents, clients, server and tools."""

from accord.agents import Agent, AgentExecutor, RequestContext, TaskUpdater, agent
from accord.client import Client, SyncClient
from accord.errors import A2AClientError, A2AError
from accord.server import create_app

__version__ = "0.1.0"

__all__ = [
    "A2AClientError",
    "A2AError",
    "Agent",
    "AgentExecutor",
    "Client",
    "RequestContext",
    "SyncClient",
    "TaskUpdater",
    "__version__",
    "agent",
    "create_app",
]
