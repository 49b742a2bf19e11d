"""accord: the Agent2Agent (A2A) protocol for Python — agents, clients, server and tools."""

from accord.agents import Agent, AgentExecutor, RequestContext, TaskUpdater, agent
from accord.errors import A2AClientError, A2AError
from accord.server import create_app

# isort: split
# The client reads the codecs, which read the server's modules: the server is imported first.
from accord.client import Client, SyncClient

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
