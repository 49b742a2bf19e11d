"""Push targets and payload formats: what a webhook is sent, named so stores can keep it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace

from accord.core.records import EventRecord
from accord.types import PushNotificationConfig, Task, TaskStatusUpdateEvent, new_id

TASK_SNAPSHOTS = "task"
"""The payload format of webhooks registered in A2A 0.1 to 0.3 (and of configs stored before
formats existed): the whole task, as JSON, after each status change."""


class PushFormat(ABC):
    """What one kind of webhook is sent: which of a task's records, in what body.

    A push config remembers the `name` of the format chosen by the codec that received it; the
    sender finds the format by that name among those registered (`register_push_format`).
    """

    name: str
    media_type: str = "application/json"

    @abstractmethod
    def body(self, record: EventRecord, task: Task) -> bytes | None:
        """The body announcing `record` (`task` is the task as of it), or None to send nothing."""


@dataclass(frozen=True, slots=True)
class PushTarget:
    """A webhook of a task: its config and the name of the PushFormat it is sent in."""

    config: PushNotificationConfig
    payload_format: str = TASK_SNAPSHOTS

    def identified(self) -> PushTarget:
        """This target, its config given a new id if it has none (as stores save configs)."""
        if self.config.id is not None:
            return self
        return replace(self, config=self.config.model_copy(update={"id": new_id()}))


class TaskSnapshots(PushFormat):
    """The task's canonical JSON (0.1-0.3's Task object) whenever its status changed."""

    name = TASK_SNAPSHOTS

    def body(self, record: EventRecord, task: Task) -> bytes | None:
        if isinstance(record.event, TaskStatusUpdateEvent | Task):
            return task.to_json()
        return None


_FORMATS: dict[str, PushFormat] = {}


def register_push_format(push_format: PushFormat) -> PushFormat:
    """Make `push_format` known by its name (codecs register the formats of their versions)."""
    _FORMATS[push_format.name] = push_format
    return push_format


register_push_format(TaskSnapshots())


def push_format(name: str) -> PushFormat | None:
    """The format registered under `name`, if any."""
    return _FORMATS.get(name)
