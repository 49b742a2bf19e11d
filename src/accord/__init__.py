"""accord: the Agent2Agent (A2A) protocol for Python — agents, clients, server and tools."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from accord.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from accord.agents import Agent, AgentExecutor, RequestContext, TaskUpdater, agent
    from accord.client import Client, SyncClient
    from accord.errors import A2AClientError, A2AError
    from accord.server import ServerConfig, create_app

__version__ = "0.1.0"

# Each name is imported from its module on first use, so that a script that only calls
# agents (`import accord.client`) never loads the server, the runtime or the store.
_WHERE = {
    "A2AClientError": "accord.errors",
    "A2AError": "accord.errors",
    "Agent": "accord.agents",
    "AgentExecutor": "accord.agents",
    "Client": "accord.client",
    "RequestContext": "accord.agents",
    "ServerConfig": "accord.server",
    "SyncClient": "accord.client",
    "TaskUpdater": "accord.agents",
    "agent": "accord.agents",
    "create_app": "accord.server",
}

__all__ = [
    "A2AClientError",
    "A2AError",
    "Agent",
    "AgentExecutor",
    "Client",
    "RequestContext",
    "ServerConfig",
    "SyncClient",
    "TaskUpdater",
    "__version__",
    "agent",
    "create_app",
    "gateway",
]


_exported = lazy_exports(__name__, _WHERE)


def __getattr__(name: str) -> Any:
    if name == "gateway":  # a package, called as a function (`accord.gateway(url)`)
        return import_module("accord.gateway")
    return _exported(name)


def __dir__() -> list[str]:
    return __all__
