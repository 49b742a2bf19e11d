"""Task persistence: the TaskStore interface and its backends."""

from accord.core.query import TaskPage, TaskQuery
from accord.store.base import LostTaskError, Orphan, StaleTaskError, StoredTask, TaskStore
from accord.store.factory import DEFAULT_STORE_URL, open_store
from accord.store.memory import InMemoryTaskStore
from accord.store.retention import CleanupReport, Retention

__all__ = [
    "DEFAULT_STORE_URL",
    "CleanupReport",
    "InMemoryTaskStore",
    "LostTaskError",
    "Orphan",
    "Retention",
    "StaleTaskError",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "open_store",
]
