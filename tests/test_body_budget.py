"""BodyBudget: what a request reserves is given back once, when its body starts or it ends."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import ClientDisconnect
from starlette.types import Message, Receive, Scope, Send

from accord.server.body_budget import BodyBudget
from accord.server.http_request import IndexedRequest, read_body

LARGE = 100_000
"""A body the budget counts (small ones are free)."""


def _scope(length: int | None = None) -> dict[str, Any]:
    headers = [] if length is None else [(b"content-length", str(length).encode())]
    return {"type": "http", "method": "POST", "path": "/", "headers": headers}


def _receiving(*chunks: bytes, whole: bool = True) -> Receive:
    """The body in `chunks` (not `whole`: more to come, then the client disconnects)."""
    last = len(chunks) - 1 if whole else len(chunks)
    messages: list[Message] = [
        {"type": "http.request", "body": chunk, "more_body": index < last}
        for index, chunk in enumerate(chunks)
    ]

    async def receive() -> Message:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    return receive


class _Sent:
    """A server's `send`, noting what the budget had free as each message went."""

    def __init__(self, budget: BodyBudget) -> None:
        self.budget = budget
        self.messages: list[tuple[Message, int]] = []

    async def __call__(self, message: Message) -> None:
        self.messages.append((message, self.budget.available))


def _reading(budget: BodyBudget, *, then_raise: bool = False) -> Any:
    """An app reading its body within `budget`, then answering (or raising)."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await read_body(IndexedRequest(scope, receive, send), 10 * LARGE, budget)
        if then_raise:
            raise RuntimeError("failed after reading")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    return app


async def test_a_reservation_is_given_back_as_the_body_starts() -> None:
    budget = BodyBudget(4 * LARGE)
    sent = _Sent(budget)
    app = budget.middleware(_reading(budget))
    await app(_scope(LARGE), _receiving(b"x" * LARGE), sent)
    (start, free_at_start), (body, free_at_body) = sent.messages
    assert start["type"] == "http.response.start" and free_at_start == 3 * LARGE
    assert body["body"] == b"{}" and free_at_body == 4 * LARGE


async def test_a_body_of_undeclared_length_is_reserved_as_it_grows() -> None:
    budget = BodyBudget(4 * LARGE)
    sent = _Sent(budget)
    app = budget.middleware(_reading(budget))
    await app(_scope(), _receiving(b"x" * LARGE, b"y" * LARGE), sent)
    assert [free for _, free in sent.messages] == [2 * LARGE, 4 * LARGE]


async def test_small_bodies_reserve_nothing_and_their_messages_pass_as_they_are() -> None:
    budget = BodyBudget(4 * LARGE)
    sent = _Sent(budget)
    app = budget.middleware(_reading(budget))
    await app(_scope(2), _receiving(b"{}"), sent)
    assert [free for _, free in sent.messages] == [4 * LARGE, 4 * LARGE]
    assert sent.messages[1][0] == {"type": "http.response.body", "body": b"{}"}


async def test_a_reservation_is_given_back_when_the_app_raises() -> None:
    budget = BodyBudget(4 * LARGE)
    app = budget.middleware(_reading(budget, then_raise=True))
    with pytest.raises(RuntimeError):
        await app(_scope(LARGE), _receiving(b"x" * LARGE), _Sent(budget))
    assert budget.available == 4 * LARGE


async def test_a_reservation_is_given_back_when_the_client_disconnects() -> None:
    budget = BodyBudget(4 * LARGE)
    app = budget.middleware(_reading(budget))
    with pytest.raises(ClientDisconnect):  # half the body, then the client is gone
        await app(_scope(2 * LARGE), _receiving(b"x" * LARGE, whole=False), _Sent(budget))
    assert budget.available == 4 * LARGE
