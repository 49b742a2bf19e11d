"""What the operations suite reads off the wire: canonical facts (states, ids, texts), the
reader of each version's shapes, and protocol errors as their reasons."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rest import ERROR_INFO

Json = dict[str, Any]

# --- canonical facts -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TaskFacts:
    """What a scenario checks of a task: ids, state (0.3 spelling), the text of its status
    message, and the texts of its messages and artifacts."""

    id: str
    context_id: str
    state: str
    status_text: str | None
    history: list[str]
    artifacts: list[str]


@dataclass(frozen=True, slots=True)
class MessageFacts:
    """What a scenario checks of a message reply."""

    role: str
    text: str
    context_id: str | None


@dataclass(frozen=True, slots=True)
class EventFacts:
    """One stream event: its kind (task, status, artifact, message), the task it is about, the
    state it reports, its text (a status update's: its message's), whether it is `final` (None
    where the version has no such flag), and its SSE event number (None where there is none)."""

    kind: str
    task_id: str | None
    state: str | None = None
    text: str | None = None
    final: bool | None = None
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class PushFacts:
    """A push notification config as the wire returned it."""

    task_id: str
    id: str
    url: str
    token: str | None


@dataclass(frozen=True, slots=True)
class Page:
    """One page of ListTasks: the task ids and the token of the next page ("" for none)."""

    ids: list[str]
    next_token: str
    total_size: int
    tasks: list[TaskFacts] = field(default_factory=list)


class Refused(Exception):
    """The server answered with a protocol error: its reason (the ErrorInfo name, or
    INVALID_PARAMS / METHOD_NOT_FOUND), the fields named by InvalidParams, and its message."""

    def __init__(self, reason: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message
        self.fields = fields or []


# Each error's JSON-RPC code, HTTP status and gRPC status (spec 1.0, sections 5.4 and 9.5).
ERRORS: dict[str, tuple[int, int, str]] = {
    "INVALID_PARAMS": (-32602, 400, "INVALID_ARGUMENT"),
    "METHOD_NOT_FOUND": (-32601, 404, "NOT_FOUND"),
    "TASK_NOT_FOUND": (-32001, 404, "NOT_FOUND"),
    "TASK_NOT_CANCELABLE": (-32002, 400, "FAILED_PRECONDITION"),
    "PUSH_NOTIFICATION_NOT_SUPPORTED": (-32003, 400, "FAILED_PRECONDITION"),
    "UNSUPPORTED_OPERATION": (-32004, 400, "FAILED_PRECONDITION"),
    "CONTENT_TYPE_NOT_SUPPORTED": (-32005, 400, "INVALID_ARGUMENT"),
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": (-32007, 400, "FAILED_PRECONDITION"),
    "VERSION_NOT_SUPPORTED": (-32009, 400, "FAILED_PRECONDITION"),
    "UNAUTHENTICATED": (-32040, 401, "UNAUTHENTICATED"),  # accord's
    "PERMISSION_DENIED": (-32041, 403, "PERMISSION_DENIED"),  # accord's
    "RESOURCE_EXHAUSTED": (-32042, 429, "RESOURCE_EXHAUSTED"),  # accord's RateLimited
    "DEADLINE_EXCEEDED": (-32043, 504, "DEADLINE_EXCEEDED"),  # accord's RequestTimedOut
}
BY_CODE = {code: reason for reason, (code, _, _) in ERRORS.items()}


def sdk_type_name(reason: str) -> str:
    """The name 0.3 clients know an error by (the official Python SDK's class name):
    TASK_NOT_FOUND is TaskNotFoundError; accord's own errors go by their class names."""
    if reason in ACCORD_TYPE_NAMES:
        return ACCORD_TYPE_NAMES[reason]
    return "".join(word.capitalize() for word in reason.split("_")) + "Error"


ACCORD_TYPE_NAMES = {
    "UNAUTHENTICATED": "Unauthenticated",
    "PERMISSION_DENIED": "PermissionDenied",
    "RESOURCE_EXHAUSTED": "RateLimited",
    "DEADLINE_EXCEEDED": "RequestTimedOut",
}


def proto_state(wire_state: str) -> str:
    """A proto state name (TASK_STATE_INPUT_REQUIRED, 0.3's CANCELLED) in the 0.3 JSON spelling."""
    name = wire_state.removeprefix("TASK_STATE_").lower().replace("_", "-")
    return "canceled" if name == "cancelled" else name


def error_details(details: list[Json]) -> tuple[str | None, list[str]]:
    """The ErrorInfo reason and the BadRequest fields of ProtoJSON `Any` details."""
    reason: str | None = None
    fields: list[str] = []
    for detail in details:
        if detail["@type"] == ERROR_INFO:
            assert detail["domain"] == "a2a-protocol.org"
            reason = detail["reason"]
        elif detail["@type"].endswith("google.rpc.BadRequest"):
            fields = [v["field"] for v in detail["fieldViolations"]]
    return reason, fields


# --- reading each version's shapes -----------------------------------------------------------


def _texts(parts: list[Json]) -> str:
    return "\n".join(part["text"] for part in parts if "text" in part)


class CanonicalShapes:
    """The 0.2/0.3 JSON-RPC shapes: `kind` members, kebab-case states, `parts`."""

    @staticmethod
    def task(task: Json) -> TaskFacts:
        assert task["kind"] == "task"
        status = task["status"]
        return TaskFacts(
            id=task["id"],
            context_id=task["contextId"],
            state=status["state"],
            status_text=_texts(status["message"]["parts"]) if "message" in status else None,
            history=[_texts(m["parts"]) for m in task.get("history", [])],
            artifacts=[_texts(a["parts"]) for a in task.get("artifacts", [])],
        )

    @classmethod
    def reply(cls, result: Json) -> TaskFacts | MessageFacts:
        if result["kind"] == "message":
            return MessageFacts(result["role"], _texts(result["parts"]), result.get("contextId"))
        return cls.task(result)

    @classmethod
    def event(cls, event: Json, seq: int | None) -> EventFacts:
        kind = event["kind"]
        if kind == "task":
            task = cls.task(event)
            return EventFacts("task", task.id, task.state, seq=seq)
        if kind == "message":
            return EventFacts("message", event.get("taskId"), text=_texts(event["parts"]), seq=seq)
        if kind == "status-update":
            status = event["status"]
            text = _texts(status["message"]["parts"]) if "message" in status else None
            return EventFacts("status", event["taskId"], status["state"], text, event["final"], seq)
        assert kind == "artifact-update", event
        text = _texts(event["artifact"]["parts"])
        return EventFacts("artifact", event["taskId"], text=text, seq=seq)


class ProtoShapes:
    """The ProtoJSON shapes of 1.0 (and, with `content` for a message's parts, of 0.3)."""

    MESSAGE_PARTS = "parts"
    HAS_FINAL = False

    @classmethod
    def _status_text(cls, status: Json) -> str | None:
        message = status.get("message")
        return None if message is None else _texts(message.get(cls.MESSAGE_PARTS, []))

    @classmethod
    def task(cls, task: Json) -> TaskFacts:
        assert "kind" not in task
        return TaskFacts(
            id=task["id"],
            context_id=task["contextId"],
            state=proto_state(task["status"]["state"]),
            status_text=cls._status_text(task["status"]),
            history=[_texts(m.get(cls.MESSAGE_PARTS, [])) for m in task.get("history", [])],
            artifacts=[_texts(a.get("parts", [])) for a in task.get("artifacts", [])],
        )

    @classmethod
    def message(cls, message: Json) -> MessageFacts:
        role = message["role"].removeprefix("ROLE_").lower()
        return MessageFacts(role, _texts(message[cls.MESSAGE_PARTS]), message.get("contextId"))

    @classmethod
    def reply(cls, result: Json) -> TaskFacts | MessageFacts:
        (member,) = result
        return cls.message(result["message"]) if member == "message" else cls.task(result["task"])

    @classmethod
    def event(cls, event: Json, seq: int | None) -> EventFacts:
        (member,) = event
        body = event[member]
        if member == "task":
            task = cls.task(body)
            return EventFacts("task", task.id, task.state, seq=seq)
        if member == "message":
            reply = cls.message(body).text
            return EventFacts("message", body.get("taskId"), text=reply, seq=seq)
        if member == "statusUpdate":
            status = body["status"]
            final = body.get("final", False) if cls.HAS_FINAL else None  # proto3 omits false
            said = cls._status_text(status)
            return EventFacts(
                "status", body["taskId"], proto_state(status["state"]), said, final, seq
            )
        assert member == "artifactUpdate", event
        return EventFacts(
            "artifact", body["taskId"], text=_texts(body["artifact"]["parts"]), seq=seq
        )


class Proto03Shapes(ProtoShapes):
    """0.3 ProtoJSON: a message's parts are its `content`; status updates say if `final`."""

    MESSAGE_PARTS = "content"
    HAS_FINAL = True
