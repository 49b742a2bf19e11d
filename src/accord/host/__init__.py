"""The multi-agent host: an A2A agent delegating to remote agents by their skills (docs/host.md).

accord serve accord.host:agent        # or: accord host --agent http://127.0.0.1:8001
"""

from accord.host.agent import host_agent
from accord.host.registry import AgentRegistry, RegistryError, RemoteAgent

agent = host_agent()

__all__ = ["AgentRegistry", "RegistryError", "RemoteAgent", "agent", "host_agent"]
