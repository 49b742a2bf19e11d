"""A2A and MCP, both ways: A2A agents offered as MCP tools (`AgentBridge`, `accord mcp
serve`), and the tools of MCP servers for an accord agent (`tools`). Needs the `mcp` extra."""

from accord.mcp.bridge import AgentBridge
from accord.mcp.tools import McpTool, ServerUnavailable, Toolbox, ToolFailed, tools

__all__ = ["AgentBridge", "McpTool", "ServerUnavailable", "ToolFailed", "Toolbox", "tools"]
