"""Task persistence: the TaskStore interface and its backends."""

from accord.store.base import StoredTask, TaskStore
from accord.store.memory import InMemoryTaskStore

__all__ = ["InMemoryTaskStore", "StoredTask", "TaskStore"]
