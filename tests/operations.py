"""The A2A operations over each (binding, version) as the wire speaks them, read back as
canonical facts (states, ids, texts, error reasons) for the one operations suite."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, ClassVar

import grpc
import httpx
from google.protobuf import json_format, message_factory
from google.protobuf.message import Message as ProtoMessage
from google.rpc import error_details_pb2, status_pb2  # noqa: F401  (ErrorInfo, BadRequest in Any)

from accord.grpc.generated.v0_3 import a2a_pb2 as pb3
from accord.grpc.generated.v0_3 import a2a_pb2_grpc as rpc3
from accord.grpc.generated.v1_0 import a2a_pb2 as pb10
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as rpc10
from accord.types import new_id
from agents_for_tests import SAFETY_TIMEOUT
from rest import A2A_JSON, ERROR_INFO, MEDIA_TYPES
from rpc import JSON_HEADERS, Json, SseStream, request

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
}
_BY_CODE = {code: reason for reason, (code, _, _) in ERRORS.items()}


def _state(wire_state: str) -> str:
    """A proto state name (TASK_STATE_INPUT_REQUIRED, 0.3's CANCELLED) in the 0.3 JSON spelling."""
    name = wire_state.removeprefix("TASK_STATE_").lower().replace("_", "-")
    return "canceled" if name == "cancelled" else name


def _details(details: list[Json]) -> tuple[str | None, list[str]]:
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
            state=_state(task["status"]["state"]),
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
            text = cls.message(body).text
            return EventFacts("message", body.get("taskId"), text=text, seq=seq)
        if member == "statusUpdate":
            status = body["status"]
            final = body.get("final", False) if cls.HAS_FINAL else None  # proto3 omits false
            text = cls._status_text(status)
            return EventFacts("status", body["taskId"], _state(status["state"]), text, final, seq)
        assert member == "artifactUpdate", event
        return EventFacts(
            "artifact", body["taskId"], text=_texts(body["artifact"]["parts"]), seq=seq
        )


class Proto03Shapes(ProtoShapes):
    """0.3 ProtoJSON: a message's parts are its `content`; status updates say if `final`."""

    MESSAGE_PARTS = "content"
    HAS_FINAL = True


# --- event streams ---------------------------------------------------------------------------


class Events:
    """The events of one stream as facts; opening it already read the first event (a stream
    refused before it started raises Refused there, whatever the binding)."""

    def __init__(self, first: EventFacts, rest: AsyncIterator[EventFacts]) -> None:
        self._pending: list[EventFacts] = [first]
        self._rest = rest

    async def next(self) -> EventFacts:
        if self._pending:
            return self._pending.pop()
        try:
            return await anext(self._rest)
        except StopAsyncIteration:
            raise AssertionError("the stream ended before the expected event") from None

    async def rest(self) -> list[EventFacts]:
        return [*self._pending, *[event async for event in self._rest]]


async def _opened(events: AsyncIterator[EventFacts]) -> Events:
    try:
        first = await anext(events)
    except StopAsyncIteration:
        raise AssertionError("the stream ended without an event") from None
    return Events(first, events)


# --- the adapter interface -------------------------------------------------------------------

OPERATIONS = frozenset(
    {
        "send",
        "stream",
        "get_task",
        "cancel",
        "subscribe",
        "replay",
        "list_tasks",
        "push_configs",
        "extended_card",
    }
)


class Wire:
    """The operations of one (binding, version) against one server.

    `lacks` names the OPERATIONS this binding and version do not have (ListTasks before 1.0;
    Last-Event-ID replay where no SSE carries event numbers); a scenario needing one of them is
    not generated for it. Every call raises Refused when the server answers with an error.
    """

    name: ClassVar[str]
    version: ClassVar[str]
    lacks: ClassVar[frozenset[str]] = frozenset()
    zero_history_is_all: ClassVar[bool] = False
    """Whether a `historyLength` of 0 asks for the whole history (proto3 cannot tell 0 from
    unset in the 0.3 proto) instead of none."""

    async def send(
        self,
        text: str,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        blocking: bool = True,
    ) -> TaskFacts | MessageFacts:
        raise NotImplementedError

    async def send_without_message_id(self, text: str) -> None:
        """A send whose message has no id (or an empty one): InvalidParams naming it."""
        raise NotImplementedError

    def stream(self, text: str, **message: Any) -> Any:
        """Async context manager: the Events of a streaming send."""
        raise NotImplementedError

    async def get_task(self, task_id: str, history_length: int | None = None) -> TaskFacts:
        raise NotImplementedError

    async def cancel(self, task_id: str) -> TaskFacts:
        raise NotImplementedError

    def subscribe(self, task_id: str, last_event_id: int | None = None) -> Any:
        """Async context manager: the Events of a subscription to `task_id`."""
        raise NotImplementedError

    async def list_tasks(self, **filters: Any) -> Page:
        """ListTasks with 1.0 request fields (`contextId`, `status` as 0.3 state, paging)."""
        raise NotImplementedError

    async def set_push(self, task_id: str, config_id: str, url: str, token: str) -> PushFacts:
        raise NotImplementedError

    async def get_push(self, task_id: str, config_id: str) -> PushFacts:
        raise NotImplementedError

    async def list_push(self, task_id: str) -> list[PushFacts]:
        raise NotImplementedError

    async def delete_push(self, task_id: str, config_id: str) -> None:
        raise NotImplementedError

    async def extended_card_name(self) -> str:
        raise NotImplementedError

    async def send_naming_the_other_version(self, text: str) -> None:
        """This version's send, sent naming the other protocol version."""
        raise NotImplementedError


# --- JSON-RPC --------------------------------------------------------------------------------


class JsonRpcWire(Wire):
    """JSON-RPC over HTTP: POST / with a request object; streams as SSE of response objects."""

    version: ClassVar[str]

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    def _headers(self, version: str | None = None, **extra: str) -> dict[str, str]:
        return {**JSON_HEADERS, "A2A-Version": version or self.version, **extra}

    def _refused(self, error: Json) -> Refused:
        raise NotImplementedError

    async def call(self, method: str, params: Any, *, version: str | None = None) -> Any:
        response = await self.http.post(
            "/", content=json.dumps(request(method, params)), headers=self._headers(version)
        )
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("application/json")
        assert version is not None or response.headers["a2a-version"] == self.version
        body: Json = response.json()
        assert body["jsonrpc"] == "2.0" and body["id"] == 1
        assert ("result" in body) != ("error" in body), body
        if "error" in body:
            raise self._refused(body["error"])
        return body["result"]

    @asynccontextmanager
    async def _stream(
        self,
        method: str,
        params: Any,
        read: Callable[[Json, int | None], EventFacts],
        **headers: str,
    ) -> AsyncIterator[Events]:
        body = json.dumps(request(method, params))
        async with self.http.stream(
            "POST", "/", content=body, headers=self._headers(**headers)
        ) as response:
            assert response.status_code == 200
            if not response.headers["content-type"].startswith("text/event-stream"):
                await response.aread()
                raise self._refused(response.json()["error"])

            async def events() -> AsyncIterator[EventFacts]:
                async for event in SseStream(response):
                    if "error" in event.data:
                        raise self._refused(event.data["error"])
                    yield read(event.data["result"], event.id)

            yield await _opened(events())


class JsonRpc03(JsonRpcWire):
    """A2A 0.3 JSON-RPC: slash method names, the canonical `kind` shapes."""

    name = "jsonrpc-0.3"
    version = "0.3"
    lacks = frozenset({"list_tasks"})

    def _refused(self, error: Json) -> Refused:
        fields = [p["field"] for p in error.get("data") or []] if error["code"] == -32602 else []
        return Refused(_BY_CODE.get(error["code"], str(error["code"])), error["message"], fields)

    @staticmethod
    def _message(text: str, **ids: str | None) -> Json:
        message: Json = {
            "kind": "message",
            "messageId": new_id(),
            "role": "user",
            "parts": [{"kind": "text", "text": text}],
        }
        return {**message, **{k: v for k, v in ids.items() if v is not None}}

    async def send(
        self,
        text: str,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        blocking: bool = True,
    ) -> TaskFacts | MessageFacts:
        params: Json = {"message": self._message(text, taskId=task_id, contextId=context_id)}
        if not blocking:
            params["configuration"] = {"blocking": False}
        return CanonicalShapes.reply(await self.call("message/send", params))

    async def send_without_message_id(self, text: str) -> None:
        message = self._message(text)
        del message["messageId"]
        await self.call("message/send", {"message": message})

    def stream(self, text: str, **message: Any) -> Any:
        params = {"message": self._message(text, **message)}
        return self._stream("message/stream", params, CanonicalShapes.event)

    async def get_task(self, task_id: str, history_length: int | None = None) -> TaskFacts:
        params: Json = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        return CanonicalShapes.task(await self.call("tasks/get", params))

    async def cancel(self, task_id: str) -> TaskFacts:
        return CanonicalShapes.task(await self.call("tasks/cancel", {"id": task_id}))

    def subscribe(self, task_id: str, last_event_id: int | None = None) -> Any:
        extra = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
        return self._stream("tasks/resubscribe", {"id": task_id}, CanonicalShapes.event, **extra)

    @staticmethod
    def _push(found: Json) -> PushFacts:
        config = found["pushNotificationConfig"]
        return PushFacts(found["taskId"], config["id"], config["url"], config.get("token"))

    async def set_push(self, task_id: str, config_id: str, url: str, token: str) -> PushFacts:
        config = {"id": config_id, "url": url, "token": token}
        params = {"taskId": task_id, "pushNotificationConfig": config}
        return self._push(await self.call("tasks/pushNotificationConfig/set", params))

    async def get_push(self, task_id: str, config_id: str) -> PushFacts:
        params = {"id": task_id, "pushNotificationConfigId": config_id}
        return self._push(await self.call("tasks/pushNotificationConfig/get", params))

    async def list_push(self, task_id: str) -> list[PushFacts]:
        found = await self.call("tasks/pushNotificationConfig/list", {"id": task_id})
        return [self._push(config) for config in found]

    async def delete_push(self, task_id: str, config_id: str) -> None:
        params = {"id": task_id, "pushNotificationConfigId": config_id}
        assert await self.call("tasks/pushNotificationConfig/delete", params) is None

    async def extended_card_name(self) -> str:
        card = await self.call("agent/getAuthenticatedExtendedCard", None)
        assert "supportedInterfaces" not in card  # a 0.3 card
        name: str = card["name"]
        return name

    async def send_naming_the_other_version(self, text: str) -> None:
        await self.call("message/send", {"message": self._message(text)}, version="1.0")


# --- A2A 1.0: one set of request fields (ProtoJSON) over JSON-RPC, HTTP+JSON and gRPC ----------


class Ops10(Wire):
    """The 1.0 operations, given a transport that runs a 1.0 method with its ProtoJSON fields."""

    version: ClassVar[str] = "1.0"

    async def call(self, method: str, fields: Json, *, version: str | None = None) -> Any:
        raise NotImplementedError

    def open_stream(self, method: str, fields: Json, last_event_id: int | None = None) -> Any:
        raise NotImplementedError

    @staticmethod
    def _message(text: str, **ids: str | None) -> Json:
        message: Json = {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": text}]}
        return {**message, **{k: v for k, v in ids.items() if v is not None}}

    async def send(
        self,
        text: str,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        blocking: bool = True,
    ) -> TaskFacts | MessageFacts:
        fields: Json = {"message": self._message(text, taskId=task_id, contextId=context_id)}
        if not blocking:
            fields["configuration"] = {"returnImmediately": True}
        return ProtoShapes.reply(await self.call("SendMessage", fields))

    async def send_without_message_id(self, text: str) -> None:
        message = self._message(text)
        del message["messageId"]
        await self.call("SendMessage", {"message": message})

    def stream(self, text: str, **message: Any) -> Any:
        return self.open_stream("SendStreamingMessage", {"message": self._message(text, **message)})

    async def get_task(self, task_id: str, history_length: int | None = None) -> TaskFacts:
        fields: Json = {"id": task_id}
        if history_length is not None:
            fields["historyLength"] = history_length
        return ProtoShapes.task(await self.call("GetTask", fields))

    async def cancel(self, task_id: str) -> TaskFacts:
        return ProtoShapes.task(await self.call("CancelTask", {"id": task_id}))

    def subscribe(self, task_id: str, last_event_id: int | None = None) -> Any:
        return self.open_stream("SubscribeToTask", {"id": task_id}, last_event_id)

    async def list_tasks(self, **filters: Any) -> Page:
        if "status" in filters:
            filters["status"] = "TASK_STATE_" + filters["status"].upper().replace("-", "_")
        found = await self.call("ListTasks", filters)
        tasks = [ProtoShapes.task(task) for task in found.get("tasks", [])]
        token, total = found.get("nextPageToken", ""), found.get("totalSize", 0)
        return Page([task.id for task in tasks], token, total, tasks)

    @staticmethod
    def _push(found: Json) -> PushFacts:
        return PushFacts(found["taskId"], found["id"], found["url"], found.get("token"))

    async def set_push(self, task_id: str, config_id: str, url: str, token: str) -> PushFacts:
        fields = {"taskId": task_id, "id": config_id, "url": url, "token": token}
        return self._push(await self.call("CreateTaskPushNotificationConfig", fields))

    async def get_push(self, task_id: str, config_id: str) -> PushFacts:
        fields = {"taskId": task_id, "id": config_id}
        return self._push(await self.call("GetTaskPushNotificationConfig", fields))

    async def list_push(self, task_id: str) -> list[PushFacts]:
        found = await self.call("ListTaskPushNotificationConfigs", {"taskId": task_id})
        return [self._push(config) for config in found.get("configs", [])]

    async def delete_push(self, task_id: str, config_id: str) -> None:
        fields = {"taskId": task_id, "id": config_id}
        assert not await self.call("DeleteTaskPushNotificationConfig", fields)

    async def extended_card_name(self) -> str:
        card = await self.call("GetExtendedAgentCard", {})
        assert card["supportedInterfaces"]  # a 1.0 card
        name: str = card["name"]
        return name

    async def send_naming_the_other_version(self, text: str) -> None:
        await self.call("SendMessage", {"message": self._message(text)}, version="0.3")


class JsonRpc10(JsonRpcWire, Ops10):
    """A2A 1.0 JSON-RPC: PascalCase methods, ProtoJSON params and results, ErrorInfo data."""

    name = "jsonrpc-1.0"
    lacks = frozenset()

    def _refused(self, error: Json) -> Refused:
        reason, fields = _details(error.get("data") or [])
        by_code = _BY_CODE.get(error["code"], str(error["code"]))
        assert reason in (None, by_code), error
        return Refused(by_code, error["message"], fields)

    def open_stream(self, method: str, fields: Json, last_event_id: int | None = None) -> Any:
        extra = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
        return self._stream(method, fields, ProtoShapes.event, **extra)


# --- HTTP+JSON -------------------------------------------------------------------------------


def _fill(template: str, fields: Json) -> tuple[str, Json]:
    """The path of `template` with its `{field}`s taken from `fields`, and the fields left."""
    rest = dict(fields)
    parts = template.split("{")
    path = parts[0]
    for part in parts[1:]:
        name, _, tail = part.partition("}")
        path += str(rest.pop(name)) + tail
    return path, rest


class RestWire(Wire):
    """HTTP+JSON: one route per operation; errors as google.rpc.Status bodies."""

    version: ClassVar[str]
    routes: ClassVar[dict[str, tuple[str, str]]]

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    def _request(
        self, method: str, fields: Json, version: str | None
    ) -> tuple[str, str, dict[str, Any]]:
        verb, template = self.routes[method]
        path, rest = _fill(template, fields)
        headers = {"A2A-Version": version or self.version}
        options: dict[str, Any] = {"headers": headers}
        if verb == "POST":
            options["content"] = json.dumps(rest)
            headers["Content-Type"] = A2A_JSON
        else:
            options["params"] = {k: json.dumps(v).strip('"') for k, v in rest.items()}
        return verb, path, options

    @staticmethod
    def _refused(response: httpx.Response) -> Refused:
        error = response.json()["error"]
        assert error["code"] == response.status_code
        reason, fields = _details(error["details"])
        refused = Refused(reason or _status_reason(error["status"]), error["message"], fields)
        assert ERRORS[refused.reason][1:] == (response.status_code, error["status"]), error
        return refused

    async def call(self, method: str, fields: Json, *, version: str | None = None) -> Any:
        verb, path, options = self._request(method, fields, version)
        response = await self.http.request(verb, path, **options)
        if response.status_code != 200:
            raise self._refused(response)
        assert response.headers["content-type"] == MEDIA_TYPES[self.version]
        assert response.headers["a2a-version"] == self.version
        return response.json()

    @asynccontextmanager
    async def _sse(
        self,
        method: str,
        fields: Json,
        read: Callable[[Json, int | None], EventFacts],
        last_event_id: int | None,
    ) -> AsyncIterator[Events]:
        verb, path, options = self._request(method, fields, None)
        if last_event_id is not None:
            options["headers"]["Last-Event-ID"] = str(last_event_id)
        options.pop("params", None)
        async with self.http.stream(verb, path, **options) as response:
            if response.status_code != 200:
                await response.aread()
                raise self._refused(response)
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers["a2a-version"] == self.version

            async def events() -> AsyncIterator[EventFacts]:
                async for event in SseStream(response):
                    if "error" in event.data:
                        status = event.data["error"]
                        reason, fields = _details(status["details"])
                        raise Refused(
                            reason or _status_reason(status["status"]), status["message"], fields
                        )
                    yield read(event.data, event.id)

            yield await _opened(events())


def _status_reason(status: str) -> str:
    """The reason of an error with no ErrorInfo, by its google.rpc.Code name."""
    return {"INVALID_ARGUMENT": "INVALID_PARAMS", "NOT_FOUND": "METHOD_NOT_FOUND"}.get(
        status, status
    )


class Rest10(RestWire, Ops10):
    """A2A 1.0 HTTP+JSON: the routes of a2a.proto at `/`, ProtoJSON bodies."""

    name = "rest-1.0"
    lacks = frozenset()
    routes = {
        "SendMessage": ("POST", "/message:send"),
        "SendStreamingMessage": ("POST", "/message:stream"),
        "GetTask": ("GET", "/tasks/{id}"),
        "ListTasks": ("GET", "/tasks"),
        "CancelTask": ("POST", "/tasks/{id}:cancel"),
        "SubscribeToTask": ("GET", "/tasks/{id}:subscribe"),
        "CreateTaskPushNotificationConfig": ("POST", "/tasks/{taskId}/pushNotificationConfigs"),
        "GetTaskPushNotificationConfig": ("GET", "/tasks/{taskId}/pushNotificationConfigs/{id}"),
        "ListTaskPushNotificationConfigs": ("GET", "/tasks/{taskId}/pushNotificationConfigs"),
        "DeleteTaskPushNotificationConfig": (
            "DELETE",
            "/tasks/{taskId}/pushNotificationConfigs/{id}",
        ),
        "GetExtendedAgentCard": ("GET", "/extendedAgentCard"),
    }

    def open_stream(self, method: str, fields: Json, last_event_id: int | None = None) -> Any:
        return self._sse(method, fields, ProtoShapes.event, last_event_id)


# --- gRPC ------------------------------------------------------------------------------------


class GrpcWire(Wire):
    """gRPC with the generated stubs; requests and responses converted from and to ProtoJSON."""

    version: ClassVar[str]
    pb: ClassVar[ModuleType]
    stubs: ClassVar[ModuleType]

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.stub = self.stubs.A2AServiceStub(channel)
        self.methods = self.pb.DESCRIPTOR.services_by_name["A2AService"].methods_by_name

    def _invoke(self, method: str, fields: Json, version: str | None) -> Any:
        request_type = message_factory.GetMessageClass(self.methods[method].input_type)
        request = json_format.ParseDict(fields, request_type())
        metadata = (("a2a-version", version),) if version else ()
        return getattr(self.stub, method)(request, metadata=metadata)

    @staticmethod
    def _refused(error: grpc.aio.AioRpcError) -> Refused:
        trailers = dict(error.trailing_metadata() or ())
        status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
        assert status.code == error.code().value[0]
        found = json_format.MessageToDict(status)
        reason, fields = _details(found.get("details", []))
        code = error.code().name
        refused = Refused(reason or _status_reason(code), error.details() or "", fields)
        assert ERRORS[refused.reason][2] == code, (refused.reason, code)
        return refused

    async def call(self, method: str, fields: Json, *, version: str | None = None) -> Any:
        call = self._invoke(method, fields, version)
        try:
            response: ProtoMessage = await call
        except grpc.aio.AioRpcError as exc:
            raise self._refused(exc) from None
        assert ("a2a-version", self.version) in tuple(await call.initial_metadata())
        return json_format.MessageToDict(response)

    @asynccontextmanager
    async def _grpc_stream(
        self, method: str, fields: Json, read: Callable[[Json, int | None], EventFacts]
    ) -> AsyncIterator[Events]:
        call = self._invoke(method, fields, None)

        async def events() -> AsyncIterator[EventFacts]:
            try:
                async for response in call:
                    yield read(json_format.MessageToDict(response), None)
            except grpc.aio.AioRpcError as exc:
                raise self._refused(exc) from None

        try:
            yield await _opened(events())
        finally:
            call.cancel()


class Grpc10(GrpcWire, Ops10):
    """A2A 1.0 gRPC (`lf.a2a.v1.A2AService`)."""

    name = "grpc-1.0"
    lacks = frozenset({"replay"})
    pb = pb10
    stubs = rpc10

    def open_stream(self, method: str, fields: Json, last_event_id: int | None = None) -> Any:
        assert last_event_id is None
        return self._grpc_stream(method, fields, ProtoShapes.event)


# --- A2A 0.3 ProtoJSON: HTTP+JSON under /v1 and the 0.3 gRPC service, with resource names ------


class Ops03Proto(Wire):
    """The 0.3 operations with the 0.3 proto's requests (resource names), given a transport."""

    version: ClassVar[str] = "0.3"
    lacks: ClassVar[frozenset[str]] = frozenset({"list_tasks"})
    zero_history_is_all = True

    async def call(self, method: str, fields: Json, *, version: str | None = None) -> Any:
        raise NotImplementedError

    def open_stream(self, method: str, fields: Json, last_event_id: int | None = None) -> Any:
        raise NotImplementedError

    @staticmethod
    def _message(text: str, **ids: str | None) -> Json:
        message: Json = {"messageId": new_id(), "role": "ROLE_USER", "content": [{"text": text}]}
        return {**message, **{k: v for k, v in ids.items() if v is not None}}

    async def send(
        self,
        text: str,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        blocking: bool = True,
    ) -> TaskFacts | MessageFacts:
        fields: Json = {"message": self._message(text, taskId=task_id, contextId=context_id)}
        fields["configuration"] = {"blocking": blocking}
        return Proto03Shapes.reply(await self.call("SendMessage", fields))

    async def send_without_message_id(self, text: str) -> None:
        message = self._message(text)
        del message["messageId"]
        await self.call("SendMessage", {"message": message, "configuration": {"blocking": True}})

    def stream(self, text: str, **message: Any) -> Any:
        return self.open_stream("SendStreamingMessage", {"message": self._message(text, **message)})

    async def get_task(self, task_id: str, history_length: int | None = None) -> TaskFacts:
        fields: Json = {"name": f"tasks/{task_id}"}
        if history_length is not None:
            fields["historyLength"] = history_length
        return Proto03Shapes.task(await self.call("GetTask", fields))

    async def cancel(self, task_id: str) -> TaskFacts:
        return Proto03Shapes.task(await self.call("CancelTask", {"name": f"tasks/{task_id}"}))

    def subscribe(self, task_id: str, last_event_id: int | None = None) -> Any:
        return self.open_stream("TaskSubscription", {"name": f"tasks/{task_id}"}, last_event_id)

    @staticmethod
    def _push(found: Json) -> PushFacts:
        _, task_id, _, config_id = found["name"].split("/")
        config = found["pushNotificationConfig"]
        assert config["id"] == config_id
        return PushFacts(task_id, config_id, config["url"], config.get("token"))

    async def set_push(self, task_id: str, config_id: str, url: str, token: str) -> PushFacts:
        fields = {
            "parent": f"tasks/{task_id}",
            "configId": config_id,
            "config": {"pushNotificationConfig": {"url": url, "token": token}},
        }
        return self._push(await self.call("CreateTaskPushNotificationConfig", fields))

    async def get_push(self, task_id: str, config_id: str) -> PushFacts:
        name = f"tasks/{task_id}/pushNotificationConfigs/{config_id}"
        return self._push(await self.call("GetTaskPushNotificationConfig", {"name": name}))

    async def list_push(self, task_id: str) -> list[PushFacts]:
        found = await self.call("ListTaskPushNotificationConfig", {"parent": f"tasks/{task_id}"})
        return [self._push(config) for config in found.get("configs", [])]

    async def delete_push(self, task_id: str, config_id: str) -> None:
        name = f"tasks/{task_id}/pushNotificationConfigs/{config_id}"
        assert not await self.call("DeleteTaskPushNotificationConfig", {"name": name})

    async def extended_card_name(self) -> str:
        card = await self.call("GetAgentCard", {})
        assert "supportedInterfaces" not in card  # a 0.3 card
        name: str = card["name"]
        return name

    async def send_naming_the_other_version(self, text: str) -> None:
        fields = {"message": self._message(text), "configuration": {"blocking": True}}
        await self.call("SendMessage", fields, version="1.0")


class Rest03(RestWire, Ops03Proto):
    """A2A 0.3 HTTP+JSON: the 0.3 proto's routes under /v1, its ProtoJSON bodies."""

    name = "rest-0.3"
    lacks = frozenset({"list_tasks"})
    routes = {
        "SendMessage": ("POST", "/v1/message:send"),
        "SendStreamingMessage": ("POST", "/v1/message:stream"),
        "GetTask": ("GET", "/v1/{name}"),
        "CancelTask": ("POST", "/v1/{name}:cancel"),
        "TaskSubscription": ("GET", "/v1/{name}:subscribe"),
        "CreateTaskPushNotificationConfig": ("POST", "/v1/{parent}/pushNotificationConfigs"),
        "GetTaskPushNotificationConfig": ("GET", "/v1/{name}"),
        "ListTaskPushNotificationConfig": ("GET", "/v1/{parent}/pushNotificationConfigs"),
        "DeleteTaskPushNotificationConfig": ("DELETE", "/v1/{name}"),
        "GetAgentCard": ("GET", "/v1/card"),
    }

    def open_stream(self, method: str, fields: Json, last_event_id: int | None = None) -> Any:
        return self._sse(method, fields, Proto03Shapes.event, last_event_id)


class Grpc03(GrpcWire, Ops03Proto):
    """A2A 0.3 gRPC (`a2a.v1.A2AService`)."""

    name = "grpc-0.3"
    lacks = frozenset({"list_tasks", "replay"})
    pb = pb3
    stubs = rpc3

    def open_stream(self, method: str, fields: Json, last_event_id: int | None = None) -> Any:
        assert last_event_id is None
        return self._grpc_stream(method, fields, Proto03Shapes.event)


WIRES: tuple[type[Wire], ...] = (JsonRpc03, JsonRpc10, Rest03, Rest10, Grpc03, Grpc10)
"""Every (binding, version) the server answers, as the suite speaks to it."""


@dataclass(frozen=True, slots=True)
class Server:
    """Where one live server answers: its HTTP base URL and its gRPC target."""

    base_url: str
    grpc_target: str


@asynccontextmanager
async def connect_wire(kind: type[Wire], server: Server) -> AsyncIterator[Wire]:
    """A `kind` wire to `server`."""
    if issubclass(kind, GrpcWire):
        async with grpc.aio.insecure_channel(server.grpc_target) as channel:
            yield kind(channel)
        return
    async with httpx.AsyncClient(base_url=server.base_url, timeout=SAFETY_TIMEOUT) as http:
        yield kind(http)  # type: ignore[call-arg]
