"""The task runtime: state machine, event records, event bus and the executor runner."""

from accord.core.records import EventRecord
from accord.runtime.bus import EventBus, InProcessEventBus, Subscription
from accord.runtime.bus_factory import DEFAULT_BUS_URL, open_bus
from accord.runtime.follow import Execution
from accord.runtime.state_machine import IllegalTaskEvent, apply_event, check_transition
from accord.runtime.task_runtime import TaskRuntime

__all__ = [
    "DEFAULT_BUS_URL",
    "EventBus",
    "EventRecord",
    "Execution",
    "IllegalTaskEvent",
    "InProcessEventBus",
    "Subscription",
    "TaskRuntime",
    "apply_event",
    "check_transition",
    "open_bus",
]
