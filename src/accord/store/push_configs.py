"""PushConfigStore: the interface to the push notification configs of tasks."""

from __future__ import annotations

from abc import ABC, abstractmethod

from accord.core.push import PushTarget


class PushConfigStore(ABC):
    """Push configs, kept as PushTargets: the config with the name of the payload format its
    webhook wants, an opaque string the store keeps as it was given. Reads given an `owner`
    see the configs of that owner's tasks only."""

    @abstractmethod
    async def set_push_config(self, task_id: str, target: PushTarget) -> PushTarget:
        """Add or replace (by id) a push config of a task; a config without id gets one."""

    @abstractmethod
    async def get_push_config(
        self, task_id: str, config_id: str, owner: str | None = None
    ) -> PushTarget | None:
        """One push config of a task, or None."""

    @abstractmethod
    async def list_push_configs(self, task_id: str, owner: str | None = None) -> list[PushTarget]:
        """All push configs of a task, in the order they were first set."""

    @abstractmethod
    async def delete_push_config(
        self, task_id: str, config_id: str, owner: str | None = None
    ) -> bool:
        """Remove one push config of a task; False when there was none."""
