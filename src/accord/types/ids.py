"""Identifiers for messages, tasks, contexts and artifacts: time-ordered UUIDs (version 7)."""

from __future__ import annotations

import os
import threading
import time

_RANDOM_BATCH = 4096
"""Random bytes asked of the operating system at once: 409 ids' worth, one system call."""


class _RandomBytes(threading.local):
    """This thread's unused random bytes from the operating system's CSPRNG."""

    pool = b""
    used = 0


_random = _RandomBytes()


def _fresh_random_after_fork() -> None:
    global _random
    _random = _RandomBytes()  # a forked child must not hand out its parent's bytes again


os.register_at_fork(after_in_child=_fresh_random_after_fork)


def _random_bytes(count: int) -> bytes:
    local = _random
    start = local.used
    if start + count > len(local.pool):
        local.pool, start = os.urandom(_RANDOM_BATCH), 0
    local.used = start + count
    return local.pool[start : start + count]


def new_id() -> str:
    """A fresh identifier: a version 7 UUID, its creation's millisecond followed by 74
    random bits (RFC 9562).

    Ids made later sort later, so a store's indexes keyed by task or context take each new one
    near the last instead of on a random page. Built from the bytes directly: the `uuid`
    module costs several times as much, and a task takes several ids.
    """
    raw = bytearray((time.time_ns() // 1_000_000).to_bytes(6, "big") + _random_bytes(10))
    raw[6] = raw[6] & 0x0F | 0x70  # version 7
    raw[8] = raw[8] & 0x3F | 0x80  # RFC 9562 variant
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
