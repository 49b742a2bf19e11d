"""AuditLog: one JSON line per security-relevant action, apart from the application log."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from starlette.applications import Starlette

from accord.core import Inbound, Principal
from accord.errors import A2AError, PermissionDenied, RateLimited, Unauthenticated
from accord.observability.refusals import watch_refusals
from accord.observability.trace_ids import trace_id_of
from accord.server.operation_names import operation_of
from accord.server.pipeline import Call, Proceed
from accord.types import Message, Task, TaskPushNotificationConfig

REFUSALS = (Unauthenticated, PermissionDenied, RateLimited)
"""The errors that are a refusal (who may do what, how often); others are the operation's."""


class AuditLog:
    """Writes a line for every operation an app is asked for and every request its
    authentication refuses: when, which agent, who (the principal's id and scheme; never a
    credential), from where (the peer address), over which binding and version, which
    operation on which task, context or push config, `allowed` or `refused` and why, the
    error the operation ended in if any, and the trace id. Never a message's content.

    `to` is a file path (appended to), "-" for stdout, or an open text stream.
    """

    def __init__(self, to: str | Path | IO[str] = "-") -> None:
        if isinstance(to, str | Path):
            self._stream: IO[str] = (
                sys.stdout if str(to) == "-" else open(to, "a", encoding="utf-8")  # noqa: SIM115
            )
        else:
            self._stream = to
        self._lock = threading.Lock()
        self.agent = ""

    def install(self, app: Starlette) -> None:
        """Audit `app`'s operations and refusals from now on."""
        self.agent = app.state.service.agent.name
        app.state.pipeline.hooks.insert(0, self.hook)
        watch_refusals(app, self._refused)

    async def hook(self, call: Call, proceed: Proceed) -> Any:
        """The pipeline hook: one line per operation, after it (or its refusal)."""
        entry = self._entry(call.inbound, call.context.principal)
        entry["operation"] = operation_of(call)
        entry["version"] = str(call.target.version)
        entry.update(audited_ids(call.params))
        try:
            result = await proceed()
        except A2AError as exc:
            entry.update(_outcome(exc))
            self.write(entry)
            raise
        except Exception:
            entry.update(decision="allowed", error="InternalError")
            self.write(entry)
            raise
        entry.update(audited_ids(result))
        entry["decision"] = "allowed"
        self.write(entry)
        return result

    def write(self, entry: Mapping[str, Any]) -> None:
        """Append one line."""
        line = json.dumps(entry, separators=(",", ":"), ensure_ascii=True) + "\n"
        with self._lock:
            self._stream.write(line)
            self._stream.flush()

    def close(self) -> None:
        if self._stream is not sys.stdout:
            self._stream.close()

    def _refused(self, inbound: Inbound, error: A2AError) -> None:
        entry = self._entry(inbound, None)
        entry["operation"] = "authenticate"
        entry["method"] = inbound.method
        entry.update(_outcome(error))
        self.write(entry)

    def _entry(self, inbound: Inbound, principal: Principal | None) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "agent": self.agent,
            "principal": None if principal is None else principal.id,
            "scheme": None if principal is None else principal.scheme,
            "peer": inbound.peer,
            "binding": inbound.binding,
        }
        if inbound.tenant:
            entry["tenant"] = inbound.tenant
        trace_id = trace_id_of(inbound.headers)
        if trace_id:
            entry["trace_id"] = trace_id
        return entry


def _outcome(error: A2AError) -> dict[str, Any]:
    if isinstance(error, REFUSALS):
        # accord's refusals word their reason themselves, naming no credential.
        return {"decision": "refused", "reason": type(error).__name__, "why": error.message}
    return {"decision": "allowed", "error": type(error).__name__}


_ID_FIELDS = {"task_id": ("taskId", "task_id", "id"), "context_id": ("contextId", "context_id")}


def audited_ids(found: Any) -> dict[str, str]:
    """The task, context and push config ids a request's raw params or an operation's result
    name (only ids: never content)."""
    if isinstance(found, Task):
        return {"task_id": found.id, "context_id": found.context_id}
    if isinstance(found, Message):
        named = {"task_id": found.task_id, "context_id": found.context_id}
        return {key: value for key, value in named.items() if value}
    if isinstance(found, TaskPushNotificationConfig):
        config_id = found.push_notification_config.id
        return {"task_id": found.task_id, **({"config_id": config_id} if config_id else {})}
    if not isinstance(found, Mapping):
        return {}
    message = found.get("message")
    ids: dict[str, str] = {}
    for where in (found, message if isinstance(message, Mapping) else {}):
        for key, names in _ID_FIELDS.items():
            for name in names:
                value = where.get(name)
                if isinstance(value, str) and value and len(value) <= 200:
                    ids.setdefault(key, value)
    config = found.get("pushNotificationConfigId")
    if isinstance(config, str) and 0 < len(config) <= 200:
        ids["config_id"] = config
    return ids
