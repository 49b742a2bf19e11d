"""Ctrl-C held over a step that must not stop half done, then raised."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Run the block with Ctrl-C (SIGINT) held, and raise KeyboardInterrupt after it when one
    came meanwhile. Python raises KeyboardInterrupt wherever the main thread is: inside rich's
    live display starting or stopping, it would leave the console's state half changed, and
    the next stop would fail. Elsewhere than the main thread, signals cannot be handled: the
    block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: came.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if came:
        raise KeyboardInterrupt
