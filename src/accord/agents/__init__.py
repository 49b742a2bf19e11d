"""Writing agents: the executor interface, the task updater and the `@agent` decorator."""

from accord.agents.agent import Agent
from accord.agents.context import RequestContext
from accord.agents.decorator import FunctionExecutor, agent
from accord.agents.executor import AgentEvent, AgentExecutor, EventSink, NamedTask
from accord.agents.updater import Content, TaskUpdater, to_parts

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentExecutor",
    "Content",
    "EventSink",
    "FunctionExecutor",
    "NamedTask",
    "RequestContext",
    "TaskUpdater",
    "agent",
    "to_parts",
]
