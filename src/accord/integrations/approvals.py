"""A framework's tool calls that wait on the caller: the question the task asks, and the
answer read from the caller's reply (an approval, or a value)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from accord.agents import RequestContext
from accord.integrations.content import data_of, prompt_text
from accord.types import Message, TaskState

YES = frozenset({"y", "yes", "ok", "true", "approve", "approved", "confirm"})
"""The replies that approve (any other declines)."""


def answers_a_question(context: RequestContext) -> bool:
    """Whether the message continues a task that asked the caller for input (a new task in
    the same context leaves what waited unanswered and starts afresh)."""
    status = context.status_on_arrival
    return status is not None and status.state == TaskState.INPUT_REQUIRED


def may_i_call(tools: Sequence[str]) -> str:
    """The question that asks the caller to approve calls of `tools`."""
    return f"May I call {', '.join(tools)}? (yes or no)"


def approves(reply: Message) -> bool:
    """Whether the caller's reply approves: data `{"approved": true}`, or a yes."""
    data = data_of(reply)
    if data:
        return data[0].get("approved") is True
    return reply.text.strip().lower() in YES


def answer_of(reply: Message) -> Any:
    """The value the caller's reply answers with: its data when it sent only data, else its
    text."""
    data = data_of(reply)
    if len(data) == 1 and not reply.text:
        return data[0]
    return prompt_text(reply)
