"""The task runtime: state machine, event records, event bus and the executor runner."""

from accord.runtime.bus import EventBus, InProcessEventBus, Subscription
from accord.runtime.records import EventRecord
from accord.runtime.state_machine import IllegalTaskEvent, apply_event, check_transition
from accord.runtime.task_runtime import Execution, TaskRuntime

__all__ = [
    "EventBus",
    "EventRecord",
    "Execution",
    "IllegalTaskEvent",
    "InProcessEventBus",
    "Subscription",
    "TaskRuntime",
    "apply_event",
    "check_transition",
]
