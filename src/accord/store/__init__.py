"""Task persistence: the TaskStore interface and its backends."""

from accord.core.query import TaskPage, TaskQuery
from accord.store.base import (
    LostTaskError,
    Orphan,
    StaleTaskError,
    StoredTask,
    StoreOfAnotherAgent,
    TaskStore,
)
from accord.store.factory import default_store_url, open_store
from accord.store.memory import InMemoryTaskStore
from accord.store.retention import CleanupReport, Retention

__all__ = [
    "CleanupReport",
    "InMemoryTaskStore",
    "LostTaskError",
    "Orphan",
    "Retention",
    "StaleTaskError",
    "StoreOfAnotherAgent",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "default_store_url",
    "open_store",
]
