"""Task persistence: the TaskStore interface and its backends."""

from accord.store.base import StaleTaskError, StoredTask, TaskStore
from accord.store.memory import InMemoryTaskStore
from accord.store.query import TaskPage, TaskQuery

__all__ = [
    "InMemoryTaskStore",
    "StaleTaskError",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
]
