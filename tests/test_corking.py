"""CorkedTransport: the writes of one turn of the event loop leave as one, in order, and
nothing held is lost when the connection ends."""

from __future__ import annotations

import asyncio
from typing import Any

from accord.server.corking import HELD_BYTES, CorkedTransport


class RecordingTransport(asyncio.Transport):
    """The socket's side: what was sent, in how many writes, and how it ended."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[bytes] = []
        self.ended: list[str] = []

    def write(self, data: Any) -> None:
        self.sent.append(bytes(data))

    def write_eof(self) -> None:
        self.ended.append("eof")

    def close(self) -> None:
        self.ended.append("close")

    def abort(self) -> None:
        self.ended.append("abort")

    def is_closing(self) -> bool:
        return bool(self.ended)

    def get_write_buffer_size(self) -> int:
        return 7


async def test_a_response_head_and_body_leave_in_one_write() -> None:
    socket = RecordingTransport()
    corked = CorkedTransport(socket, asyncio.get_running_loop())
    corked.write(b"HTTP/1.1 200 OK\r\n\r\n")
    corked.write(b'{"result": 1}')
    assert socket.sent == [] and corked.get_write_buffer_size() == 7 + 32
    await asyncio.sleep(0)
    assert socket.sent == [b'HTTP/1.1 200 OK\r\n\r\n{"result": 1}']
    corked.write(b"next")  # a later turn: a write of its own
    await asyncio.sleep(0)
    assert socket.sent[1:] == [b"next"]


async def test_a_large_write_leaves_at_once_after_what_was_held() -> None:
    socket = RecordingTransport()
    corked = CorkedTransport(socket, asyncio.get_running_loop())
    corked.write(b"head")
    corked.write(b"x" * HELD_BYTES)
    assert socket.sent == [b"head" + b"x" * HELD_BYTES]
    await asyncio.sleep(0)
    assert len(socket.sent) == 1


async def test_ending_the_connection_sends_what_is_held_first_and_abort_drops_it() -> None:
    loop = asyncio.get_running_loop()
    for end, sent, ended in (
        ("close", [b"bye"], ["close"]),
        ("write_eof", [b"bye"], ["eof"]),
        ("abort", [], ["abort"]),
    ):
        socket = RecordingTransport()
        corked = CorkedTransport(socket, loop)
        corked.write(b"bye")
        getattr(corked, end)()
        await asyncio.sleep(0)
        assert (socket.sent, socket.ended) == (sent, ended)


async def test_what_is_held_when_the_transport_closes_underneath_is_dropped() -> None:
    socket = RecordingTransport()
    corked = CorkedTransport(socket, asyncio.get_running_loop())
    corked.write(b"late")
    socket.close()  # the peer went away (connection lost)
    await asyncio.sleep(0)
    assert socket.sent == []
    assert corked.get_extra_info("peername") is None  # the rest is the transport's
