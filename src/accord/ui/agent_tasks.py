"""An agent's own tasks for the UI: listed (A2A 1.0 `ListTasks`) and fetched one by one."""

from __future__ import annotations

from typing import Any

from accord.client import Client
from accord.errors import A2AClientError, A2AError, MethodNotFound, UnsupportedOperation
from accord.types import Task
from accord.ui.talk import AgentCallFailed

PAGE_SIZE = 50


async def list_agent_tasks(client: Client, page_token: str | None = None) -> dict[str, Any]:
    """One page of the tasks the agent keeps for the UI's credentials, most recent first:
    `{"tasks": [...], "nextPageToken": ...}`, or `{"unsupported": why}` when it cannot list
    them; AgentCallFailed when the agent fails otherwise."""
    try:
        transport = await client.transport()
    except (A2AError, A2AClientError) as exc:
        raise AgentCallFailed.of(client, exc) from None
    if transport.codec.list_tasks is None:
        return {"unsupported": f"it speaks A2A {transport.codec.version}; listing tasks needs 1.0"}
    try:
        page = await client.list_tasks(
            page_size=PAGE_SIZE, page_token=page_token or None, history_length=0
        )
    except (MethodNotFound, UnsupportedOperation) as exc:
        return {"unsupported": exc.message}
    except (A2AError, A2AClientError) as exc:
        raise AgentCallFailed.of(client, exc) from None
    return {"tasks": [task_row(task) for task in page.tasks], "nextPageToken": page.next_page_token}


async def fetch_agent_task(client: Client, task_id: str) -> dict[str, Any]:
    """The task as the agent has it, with its whole history and its artifacts."""
    try:
        task = await client.get_task(task_id)
    except (A2AError, A2AClientError) as exc:
        raise AgentCallFailed.of(client, exc) from None
    return {**task_row(task), "task": task.to_wire()}


def task_row(task: Task) -> dict[str, Any]:
    """A task as a row of the agent's list: its state, when that was set, what it said."""
    message = task.status.message
    return {
        "id": task.id,
        "contextId": task.context_id,
        "state": task.status.state.value,
        "timestamp": task.status.timestamp,
        "text": message.text if message is not None else "",
    }
