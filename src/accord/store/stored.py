"""What the store interfaces hand out and raise: stored tasks, orphans, refused saves."""

from __future__ import annotations

from dataclasses import dataclass

from accord.core.principal import ANONYMOUS_OWNER
from accord.types import Task


@dataclass(slots=True, frozen=True)
class StoredTask:
    """A task as last saved, with the sequence number of the last event applied to it, its
    owner, and the epoch of its latest claim (see `RunnerRegistry.claim`)."""

    task: Task
    seq: int
    owner: str = ANONYMOUS_OWNER
    epoch: int = 0


@dataclass(slots=True, frozen=True)
class Orphan:
    """A task that should be running but whose runner (a replica id, or None) is gone."""

    stored: StoredTask
    runner: str | None


class StaleTaskError(RuntimeError):
    """A save raced with another writer: the stored task moved on since it was read."""


class LostTaskError(StaleTaskError):
    """A save refused because its writer no longer holds the task: another claimed it since
    (a newer epoch), or the task has ended. Nothing the writer saves lands on it again."""


class StoreOfAnotherAgent(RuntimeError):
    """The store keeps the tasks of an agent of another name than the one opening it."""

    def __init__(self, recorded: str, agent: str) -> None:
        super().__init__(
            f"this task store keeps the tasks of the agent {recorded!r}, not of {agent!r}:"
            f" give {agent!r} a store of its own, or, to hand it {recorded!r}'s tasks on"
            f" purpose (a renamed agent), open the store as {recorded!r}"
            " (accord serve --store-agent, create_app(store_agent=...))"
        )
        self.recorded = recorded
        self.agent = agent
