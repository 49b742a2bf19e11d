"""What the codec unit tests share: a canonical task, and expecting InvalidParams naming a field."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pytest

from accord.codecs import Method
from accord.errors import InvalidParams
from accord.types import (
    Artifact,
    Message,
    PushNotificationConfig,
    Role,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TextPart,
)

TIME = "2026-01-02T03:04:05.678Z"
HOOK = "https://client.example.com/hook"

QUESTION = Message(
    message_id="m-1", role=Role.USER, parts=[TextPart(text="hi")], task_id="t", context_id="c"
)
TASK = Task(
    id="t",
    context_id="c",
    status=TaskStatus(state=TaskState.COMPLETED, timestamp=TIME),
    history=[QUESTION],
    artifacts=[Artifact(artifact_id="a", name="out", parts=[TextPart(text="done")])],
    metadata={"k": "v"},
)
PUSH_CONFIG = TaskPushNotificationConfig(
    task_id="t", push_notification_config=PushNotificationConfig(id="h", url=HOOK, token="tok")
)


def parsed(encoded: bytes) -> Any:
    """The JSON an encoder made."""
    return json.loads(encoded)


@contextmanager
def invalid(field: str) -> Iterator[pytest.ExceptionInfo[InvalidParams]]:
    """Expect InvalidParams naming `field` (its message starts with it, its data lists it)."""
    with pytest.raises(InvalidParams) as caught:
        yield caught
    assert caught.value.message.startswith(f"{field}:" if field else ""), caught.value.message
    assert field in [problem["field"] for problem in caught.value.data]


class Methods:
    """A codec's methods by name: `decode` their params, `encode` their results as JSON."""

    def __init__(self, methods: Mapping[str, Method]) -> None:
        self.methods = methods

    def decode(self, name: str, params: Any) -> Any:
        return self.methods[name].decode(params)

    def encode(self, name: str, result: Any) -> Any:
        return parsed(self.methods[name].encode(result))
