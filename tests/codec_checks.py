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


PYDANTIC_WORDS = (
    "Input should",
    "Field required",
    "Unable to extract",
    "discriminator",
    "Value error",
    "validation error",
    "dictionary",
    "function-",
    "tagged-union",
    "FileWith",
    "TextPart",
    "DataPart",
    "FilePart",
)
"""What pydantic's own wording and locations say, which a validation message never does."""


def assert_readable(error: InvalidParams | Mapping[str, Any]) -> None:
    """Every problem of `error` (an InvalidParams, or a JSON-RPC error object) names a field
    and says what it needs in accord's words."""
    message, problems = (
        (error.message, error.data)
        if isinstance(error, InvalidParams)
        else (error["message"], error["data"])
    )
    for text in (message, *(problem["message"] for problem in problems)):
        assert not any(word in text for word in PYDANTIC_WORDS), text
    for problem in problems:
        assert not any(word in problem["field"] for word in PYDANTIC_WORDS), problem
