"""Listing tasks: the filters, the page that comes back and the opaque page cursor."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from accord.errors import InvalidParams
from accord.types import Task, TaskState

RUNNING_STATES = frozenset({TaskState.SUBMITTED, TaskState.WORKING})
"""States in which some replica must be running the task's executor."""

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class TaskQuery:
    """Which tasks to list: newest status first, filtered, one page at a time.

    `owner` (None: every owner's) keeps the tasks one caller created (`Principal.owner`);
    the service always sets it, so totals and page tokens never count another's tasks.
    """

    context_id: str | None = None
    state: TaskState | None = None
    updated_after: datetime | None = None
    page_size: int = DEFAULT_PAGE_SIZE
    page_token: str | None = None
    owner: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= MAX_PAGE_SIZE:
            raise InvalidParams(f"pageSize must be between 1 and {MAX_PAGE_SIZE}")


@dataclass(frozen=True, slots=True)
class TaskPage:
    """One page of tasks; `next_page_token` is empty on the last page."""

    tasks: list[Task]
    next_page_token: str
    page_size: int
    total_size: int = field(default=0)


@dataclass(frozen=True, slots=True)
class ListTasksParams:
    """Which tasks to list, and how much of each to return."""

    query: TaskQuery = field(default_factory=TaskQuery)
    history_length: int | None = None
    include_artifacts: bool = False


@dataclass(frozen=True, slots=True, order=True)
class Cursor:
    """A position in the listing order: after the task (`updated`, `task_id`)."""

    updated: datetime
    task_id: str

    def encode(self) -> str:
        raw = json.dumps([self.updated.isoformat(), self.task_id]).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> Cursor:
        moment = task_id = None
        try:
            padded = token + "=" * (-len(token) % 4)
            updated, task_id = json.loads(base64.urlsafe_b64decode(padded))
            if isinstance(updated, str) and isinstance(task_id, str):
                moment = parse_timestamp(updated)
        except (ValueError, TypeError, RecursionError, InvalidParams):
            pass
        if moment is None or not isinstance(task_id, str):
            raise InvalidParams(f"pageToken {token[:40]!r} is not one this server issued")
        return cls(moment, task_id)


def status_time(task: Task) -> datetime:
    """When the task's status last changed (the listing order), as an aware datetime."""
    stamp = task.status.timestamp
    if not stamp:
        return _EPOCH
    try:
        return _aware(datetime.fromisoformat(stamp))
    except ValueError:
        return _EPOCH


def parse_timestamp(value: str) -> datetime:
    """An ISO 8601 timestamp from a request, as a datetime in UTC (UTC when unqualified).

    Raises InvalidParams for anything else, a moment outside the years 1 to 9999 in UTC included.
    """
    try:
        return _aware(datetime.fromisoformat(value)).astimezone(UTC)
    except (ValueError, OverflowError):
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise InvalidParams(f"{shown!r} is not an ISO 8601 timestamp of years 1 to 9999") from None


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
