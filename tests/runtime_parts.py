"""Runs and tasks to test the runtime's parts with, one part at a time."""

from __future__ import annotations

from accord.agents.context import RequestContext
from accord.core.principal import ANONYMOUS_OWNER
from accord.runtime.runs import Run
from accord.types import Message, Role, Task, TaskState, TaskStatus, TextPart, new_id


def user_message(text: str = "hi") -> Message:
    return Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text=text)])


def new_run(task: Task | None = None, owner: str = ANONYMOUS_OWNER, seq: int = 0) -> Run:
    """A run of a new task (none yet), or of `task` as of event `seq`."""
    task_id = task.id if task is not None else new_id()
    context_id = task.context_id if task is not None else new_id()
    context = RequestContext(
        message=user_message(), task_id=task_id, context_id=context_id, task=task
    )
    return Run(context, task, seq, owner)


def task_in(state: TaskState, *, history: list[Message] | None = None) -> Task:
    return Task(id=new_id(), context_id=new_id(), status=TaskStatus(state=state), history=history)
