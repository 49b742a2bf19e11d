"""The task state machine: applies one event to a task, rejecting what the protocol forbids.

Pure functions with no I/O; the runtime calls them under the task's lock.
"""

from __future__ import annotations

from accord.core.artifacts import merge_artifact, own_artifact
from accord.errors import InvalidAgentResponse
from accord.types import (
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    utc_now,
)

TaskChange = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent


class IllegalTaskEvent(InvalidAgentResponse):
    """The agent sent an event the task's current state does not allow."""


def new_task(task_id: str, context_id: str, message: Message) -> Task:
    """A freshly submitted task whose history starts with the client's message."""
    status = {"state": TaskState.SUBMITTED, "timestamp": utc_now()}  # validated with the task
    return Task.validated(
        {"id": task_id, "context_id": context_id, "status": status, "history": [message]}
    )


def check_transition(current: TaskState, target: TaskState) -> None:
    """Raise IllegalTaskEvent unless a task may move from `current` to `target`."""
    if current.is_terminal:
        raise IllegalTaskEvent(f"task is already {current.value}; terminal tasks never change")
    if target is TaskState.UNKNOWN:
        raise IllegalTaskEvent("an agent cannot move a task to the 'unknown' state")
    if target is TaskState.SUBMITTED and current is not TaskState.SUBMITTED:
        raise IllegalTaskEvent(f"a {current.value} task cannot go back to 'submitted'")


def is_final(state: TaskState) -> bool:
    """Whether a stream ends after a task reaches `state`."""
    return state.is_terminal or state.is_interrupted


def apply_event(task: Task, event: TaskChange) -> TaskChange:
    """Apply `event` to `task` in place and return the event as it should be published.

    Raises IllegalTaskEvent when the event belongs to another task or breaks the lifecycle.
    """
    if isinstance(event, Message):
        return _apply_message(task, event)
    if isinstance(event, Task):
        return _apply_task(task, event)
    if event.task_id != task.id:
        raise IllegalTaskEvent(f"event for task {event.task_id!r} sent to task {task.id!r}")
    if isinstance(event, TaskStatusUpdateEvent):
        return _apply_status(task, event)
    return _apply_artifact(task, event)


def _apply_message(task: Task, message: Message) -> Message:
    if task.status.state.is_terminal:
        raise IllegalTaskEvent(f"task is already {task.status.state.value}")
    if message.task_id not in (None, task.id):
        raise IllegalTaskEvent(f"message for task {message.task_id!r} sent to task {task.id!r}")
    if message.task_id is None or message.context_id is None:
        message = message.copied_with(task_id=task.id, context_id=task.context_id)
    _archive_status_message(task)
    _history(task).append(message)
    return message


def _apply_task(task: Task, snapshot: Task) -> Task:
    if snapshot.id != task.id:
        raise IllegalTaskEvent(f"task {snapshot.id!r} sent in place of task {task.id!r}")
    if snapshot.status.state is not task.status.state:
        check_transition(task.status.state, snapshot.status.state)
    elif task.status.state.is_terminal:
        raise IllegalTaskEvent(f"task is already {task.status.state.value}")
    _archive_status_message(task)
    task.status = snapshot.status
    if snapshot.artifacts is not None:
        task.artifacts = [own_artifact(a) for a in snapshot.artifacts]
    if snapshot.history:
        known = {m.message_id for m in task.history or ()}
        _history(task).extend(m for m in snapshot.history if m.message_id not in known)
    if snapshot.metadata is not None:
        task.metadata = snapshot.metadata
    return task


def _apply_status(task: Task, event: TaskStatusUpdateEvent) -> TaskStatusUpdateEvent:
    check_transition(task.status.state, event.status.state)
    status = event.status
    if status.timestamp is None:
        status = status.copied_with(timestamp=utc_now())
    _archive_status_message(task)
    # A required field, marked set already: what assignment does, without pydantic's steps.
    task.__dict__["status"] = status
    final = is_final(status.state)
    if status is not event.status or final is not event.final:
        event = event.copied_with(status=status, final=final)
    return event


def _apply_artifact(task: Task, event: TaskArtifactUpdateEvent) -> TaskArtifactUpdateEvent:
    if task.status.state.is_terminal:
        raise IllegalTaskEvent(f"task is already {task.status.state.value}; no more artifacts")
    merge_artifact(task, event)
    return event


def _archive_status_message(task: Task) -> None:
    """Move the current status message into history before something follows it.

    The current status message stays visible in `status` (as in the spec's examples) and
    joins the history once the conversation moves on, so history reads in order.
    """
    message = task.status.message
    if message is None:
        return
    history = _history(task)
    if not any(m.message_id == message.message_id for m in reversed(history)):
        history.append(message)


def _history(task: Task) -> list[Message]:
    if task.history is None:
        task.history = []
    return task.history
