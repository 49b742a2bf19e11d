"""Which operation a pipeline call runs, by its name in `accord.core.Operations`."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from accord.codecs.base import Method
from accord.server.pipeline import Call

MESSAGE_OPERATIONS = frozenset({"send_message", "stream_message"})
# 0.1's methods adapt the operations rather than naming one.
_ADAPTED = {
    "tasks/send": "send_message",
    "tasks/sendSubscribe": "stream_message",
    "tasks/resubscribe": "resubscribe",
}
_NAMES: dict[int, str] = {}


def operation_of(call: Call) -> str:
    """The name of the operation `call` runs (`send_message`, `get_task`, ...); a method an
    extension adds is named as the request names it."""
    method = call.target.method
    name = _NAMES.get(id(method))
    if name is None:
        name = operation_name(method) or _ADAPTED.get(call.inbound.method, call.inbound.method)
        if len(_NAMES) < 10_000:  # methods are made once per codec; bounded all the same
            _NAMES[id(method)] = name
    return name


def operation_name(method: Method) -> str | None:
    """The `Operations` member `method` runs, found by letting it pick from a recorder."""
    try:
        picked = method.operation(_Recorder())  # type: ignore[arg-type]
    except Exception:
        return None
    while isinstance(picked, partial):
        picked = picked.func
    return picked.name if isinstance(picked, _Picked) else None


class _Picked:
    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("a recorded operation is never run")


class _Recorder:
    def __getattr__(self, name: str) -> Callable[..., None]:
        return _Picked(name)
