"""A2A 0.1 JSON (messages, tasks, events, webhooks) as canonical 0.3 JSON and back."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from accord.codecs.base import field_error, params_object, validate
from accord.types import (
    A2AModel,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    adapters,
    new_id,
)

# 0.1 differs from 0.3 in names and shapes only: a task's `sessionId` is 0.3's `contextId`, a
# part's `type` its `kind`, an artifact has an `index` (its place in the task) where 0.3 has
# an `artifactId`; events name their task `id`. The client chooses the id of a new task, and
# a task has one webhook, kept here as the config whose id is the task's id.
#
# 0.1 messages carry no ids: a message received gets a new `messageId`. An artifact's
# `artifactId` is its 0.1 `index` (as text), so a task's artifacts and the updates of a stream
# name them alike.

# --- 0.1 JSON read ---------------------------------------------------------------------------

_PART_TYPES = ("text", "file", "data")


class LegacyTaskPushNotificationConfig(A2AModel):
    """0.1 TaskPushNotificationConfig: a task (`id`) and its webhook."""

    id: str = Field(min_length=1)
    push_notification_config: PushNotificationConfig


def message_from(value: Any, path: str = "message") -> dict[str, Any]:
    """The 0.3 JSON of a 0.1 message: a `kind` for each part, an id for the message."""
    value = _object(value, path)
    message = {k: value[k] for k in ("role", "metadata") if k in value}
    message["messageId"] = value.get("messageId") or new_id()
    message["parts"] = _parts_from(value, path)
    return message


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise field_error(path, "must be an object")
    return value


def _list_of(value: dict[str, Any], name: str, path: str) -> list[Any]:
    """The list `value[name]` (of `name`, at `path`), or InvalidParams naming the field."""
    items = value.get(name)
    if not isinstance(items, list):
        raise field_error(f"{path}.{name}" if path else name, f"must be a list of {name}")
    return items


def _parts_from(value: dict[str, Any], path: str) -> list[dict[str, Any]]:
    """The 0.3 JSON of the `parts` of a 0.1 message or artifact at `path`."""
    parts = _list_of(value, "parts", path)
    return [_part_from(part, f"{path}.parts.{i}") for i, part in enumerate(parts)]


def _part_from(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    kind = value.get("type")
    if kind not in _PART_TYPES:
        found = "is missing" if kind is None else f"{kind!r} is not a part type"
        raise field_error(f"{path}.type", f"{found}; a part is of type text, file or data")
    return {**{k: v for k, v in value.items() if k != "type"}, "kind": kind}


def push_config_from(params: Any) -> TaskPushNotificationConfig:
    """A 0.1 TaskPushNotificationConfig (a request's params or a result) as a canonical one."""
    request = validate(LegacyTaskPushNotificationConfig, params_object(params))
    config = request.push_notification_config.model_copy(update={"id": request.id})
    return TaskPushNotificationConfig(task_id=request.id, push_notification_config=config)


def status_from(value: Any, path: str) -> dict[str, Any]:
    status = _object(value, path)
    if status.get("message") is None:
        return {k: v for k, v in status.items() if k != "message"}
    return {**status, "message": message_from(status["message"], f"{path}.message")}


def _artifact_from(value: Any, path: str, index: int) -> dict[str, Any]:
    """The 0.3 JSON of a 0.1 artifact (without 0.1's `append` and `lastChunk`): its `index`
    (else `index`, its place in the list it is in) is its id."""
    artifact = _object(value, path)
    return {
        "artifactId": str(artifact.get("index", index)),
        **pick(artifact, "name", "description", "metadata"),
        "parts": _parts_from(artifact, path),
    }


def task_from(value: Any) -> Task:
    """A 0.1 task (a result) as a canonical Task; its `sessionId` is the context id."""
    task = _object(value, "result")
    out = {
        **pick(task, "id", "metadata"),
        "contextId": task.get("sessionId") or "",
        "status": status_from(task.get("status"), "status"),
    }
    if task.get("artifacts") is not None:
        artifacts = enumerate(_list_of(task, "artifacts", ""))
        out["artifacts"] = [_artifact_from(a, f"artifacts.{i}", i) for i, a in artifacts]
    if task.get("history") is not None:
        history = enumerate(_list_of(task, "history", ""))
        out["history"] = [message_from(m, f"history.{i}") for i, m in history]
    return adapters.TASK.validate_python(out)


def event_from(value: Any, context_id: str) -> StreamEvent:
    """A 0.1 stream event as a canonical status or artifact update of a task in `context_id`."""
    event = _object(value, "result")
    common = {"taskId": event.get("id"), "contextId": context_id, **pick(event, "metadata")}
    if "artifact" in event:
        artifact = _object(event["artifact"], "artifact")
        return TaskArtifactUpdateEvent.model_validate(
            {
                **common,
                "artifact": _artifact_from(artifact, "artifact", 0),
                **pick(artifact, "append", "lastChunk"),
            }
        )
    return TaskStatusUpdateEvent.model_validate(
        {
            **common,
            "status": status_from(event.get("status"), "status"),
            "final": event.get("final") or False,
        }
    )


# --- 0.1 JSON written ------------------------------------------------------------------------

# The states 0.1 does not have, as the nearest ones it has.
_STATES = {TaskState.REJECTED.value: "failed", TaskState.AUTH_REQUIRED.value: "input-required"}


def pick(obj: dict[str, Any], *names: str) -> dict[str, Any]:
    return {name: obj[name] for name in names if name in obj}


def _part(part: dict[str, Any]) -> dict[str, Any]:
    return {"type": part["kind"], **{k: v for k, v in part.items() if k != "kind"}}


def message_json(message: dict[str, Any]) -> dict[str, Any]:
    return {**pick(message, "role", "metadata"), "parts": [_part(p) for p in message["parts"]]}


def status_json(status: dict[str, Any]) -> dict[str, Any]:
    out = {"state": _STATES.get(status["state"], status["state"])}
    if "message" in status:
        out["message"] = message_json(status["message"])
    return {**out, **pick(status, "timestamp")}


def artifact_json(artifact: dict[str, Any], index: int) -> dict[str, Any]:
    out = pick(artifact, "name", "description")
    out["parts"] = [_part(p) for p in artifact["parts"]]
    return {**out, "index": index, **pick(artifact, "metadata")}


def task_json(task: dict[str, Any]) -> dict[str, Any]:
    """A task's 0.3 JSON as 0.1 JSON."""
    out = {"id": task["id"], "sessionId": task["contextId"], "status": status_json(task["status"])}
    if "artifacts" in task:
        out["artifacts"] = [artifact_json(a, i) for i, a in enumerate(task["artifacts"])]
    if "history" in task:
        out["history"] = [message_json(m) for m in task["history"]]
    return {**out, **pick(task, "metadata")}


def webhook_json(config: PushNotificationConfig) -> dict[str, Any]:
    """A webhook as 0.1 JSON, which has no id for it (a task has one webhook)."""
    webhook = config.to_wire()
    webhook.pop("id", None)
    return webhook


def push_config_json(config: TaskPushNotificationConfig) -> dict[str, Any]:
    """A task's webhook as 0.1 JSON: the task's `id` and the webhook."""
    return {
        "id": config.task_id,
        "pushNotificationConfig": webhook_json(config.push_notification_config),
    }
