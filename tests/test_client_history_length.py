"""A history length the client asks for holds over every interface, even where the binding's
wire form cannot say it (0.3's proto reads a history_length of 0 as unlimited)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from accord import Client
from accord.samples import echo
from accord.types import Task
from live_server import serve_app

INTERFACES = [
    ("JSONRPC", "1.0"),
    ("HTTP+JSON", "1.0"),
    ("GRPC", "1.0"),
    ("JSONRPC", "0.3"),
    ("HTTP+JSON", "0.3"),
    ("GRPC", "0.3"),
]


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    with serve_app(echo.agent.app(grpc_port=0)) as url:
        yield url


@pytest.mark.parametrize(("binding", "version"), INTERFACES, ids=lambda v: v)
async def test_a_history_length_of_0_returns_no_history(
    echo_url: str, binding: str, version: str
) -> None:
    async with Client(echo_url, transport=binding, version=version) as client:
        sent = await client.send("remember me", history_length=0)
        assert isinstance(sent, Task)
        fetched = await client.get_task(sent.id, history_length=0)
        full = await client.get_task(sent.id)
    assert not sent.history
    assert not fetched.history
    assert full.history and full.history[0].text == "remember me"
