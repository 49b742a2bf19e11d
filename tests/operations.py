"""The A2A operations over each (binding, version), spoken on the raw wire: one adapter per pair,
a version's requests (JSON-RPC 0.3, 1.0 ProtoJSON, 0.3 ProtoJSON) over a binding's transport
(JSON-RPC, HTTP+JSON, gRPC), read back as the facts of wire_facts."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
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
from rest import A2A_JSON, MEDIA_TYPES
from rpc import JSON_HEADERS, SseStream, request
from wire_facts import (
    BY_CODE,
    ERRORS,
    CanonicalShapes,
    EventFacts,
    Json,
    MessageFacts,
    Page,
    Proto03Shapes,
    ProtoShapes,
    PushFacts,
    Refused,
    TaskFacts,
    error_details,
    sdk_type_name,
)

Events = AbstractAsyncContextManager["EventStream"]
HTTP_STATUS_OF_REFUSALS = (200, 401, 403, 429)
"""JSON-RPC answers 200 to every error but authentication's (401), authorization's (403) and
a limit's (429)."""
ReadEvent = Callable[[Json, int | None], EventFacts]


class EventStream:
    """The events of one stream as facts. Opening it already read the first event, so a stream
    refused before it started raises Refused on opening, whatever the binding."""

    def __init__(self, first: EventFacts, rest: AsyncIterator[EventFacts]) -> None:
        self._pending = [first]
        self._rest = rest

    @classmethod
    async def open(cls, events: AsyncIterator[EventFacts]) -> EventStream:
        try:
            first = await anext(events)
        except StopAsyncIteration:
            raise AssertionError("the stream ended without an event") from None
        return cls(first, events)

    async def next(self) -> EventFacts:
        if self._pending:
            return self._pending.pop()
        try:
            return await anext(self._rest)
        except StopAsyncIteration:
            raise AssertionError("the stream ended before the expected event") from None

    async def rest(self) -> list[EventFacts]:
        return [*self._pending, *[event async for event in self._rest]]


def _given(**fields: Any) -> Json:
    """The fields that are not None."""
    return {name: value for name, value in fields.items() if value is not None}


def _replay_from(last_event_id: int | None) -> dict[str, str]:
    """The header asking a stream to replay what came after `last_event_id` (if any)."""
    return {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}


class Wire:
    """The operations of one (binding, version) against one server; every call raises Refused
    when the server answers with a protocol error.

    A version class says how its requests look (`_message`, `_configuration`, `_task`, method
    `NAMES`, the push config operations) and which `shapes` its answers have; a transport class
    runs a method (`call`, `open_stream`). `lacks` names the operations the pair does not have
    (ListTasks before 1.0; Last-Event-ID replay without SSE): no scenario needing one is
    generated for it.
    """

    name: ClassVar[str]
    version: ClassVar[str]
    lacks: ClassVar[frozenset[str]] = frozenset()
    zero_history_is_all: ClassVar[bool] = False
    """Whether a `historyLength` of 0 asks for the whole history (the 0.3 proto cannot tell 0
    from unset) instead of none."""
    shapes: ClassVar[type[CanonicalShapes] | type[ProtoShapes]]
    NAMES: ClassVar[dict[str, str]]
    PARTS: ClassVar[str] = "parts"
    """The member of a message holding its parts."""

    # --- the transport -----------------------------------------------------------------------

    async def call(self, method: str, fields: Any, *, version: str | None = None) -> Any:
        """Run `method` with `fields` (naming `version`, else this wire's); its result JSON."""
        raise NotImplementedError

    def open_stream(self, method: str, fields: Json, last_event_id: int | None = None) -> Events:
        """Run the streaming `method`; its events."""
        raise NotImplementedError

    # --- the version's requests --------------------------------------------------------------

    def _message(self, text: str, **ids: str | None) -> Json:
        raise NotImplementedError

    def _configuration(self, blocking: bool) -> Json | None:
        raise NotImplementedError

    def _task(self, task_id: str) -> Json:
        return {"id": task_id}

    def _send_fields(self, message: Json, blocking: bool = True) -> Json:
        return _given(message=message, configuration=self._configuration(blocking))

    # --- the operations ----------------------------------------------------------------------

    async def send(
        self,
        text: str,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        blocking: bool = True,
    ) -> TaskFacts | MessageFacts:
        message = self._message(text, taskId=task_id, contextId=context_id)
        result = await self.call(self.NAMES["send"], self._send_fields(message, blocking))
        return self.shapes.reply(result)

    async def send_without_message_id(self, text: str) -> None:
        """A send whose message has no id: InvalidParams naming it."""
        message = self._message(text)
        del message["messageId"]
        await self.call(self.NAMES["send"], self._send_fields(message))

    async def send_without_parts(self) -> None:
        """A send whose message has no parts: InvalidParams naming them."""
        await self.call(self.NAMES["send"], self._send_fields(self._message_without_parts()))

    def stream_without_parts(self) -> Events:
        return self.open_stream(self.NAMES["stream"], {"message": self._message_without_parts()})

    def _message_without_parts(self) -> Json:
        message = self._message("")
        message.pop("parts", None)
        message.pop("content", None)
        return {**message, self.PARTS: []}

    async def send_naming_the_other_version(self, text: str) -> None:
        """This version's send, sent naming the other protocol version."""
        other = "0.3" if self.version == "1.0" else "1.0"
        fields = self._send_fields(self._message(text))
        await self.call(self.NAMES["send"], fields, version=other)

    def stream(self, text: str, **ids: str) -> Events:
        return self.open_stream(self.NAMES["stream"], {"message": self._message(text, **ids)})

    async def get_task(self, task_id: str, history_length: int | None = None) -> TaskFacts:
        fields = {**self._task(task_id), **_given(historyLength=history_length)}
        return self.shapes.task(await self.call(self.NAMES["get"], fields))

    async def cancel(self, task_id: str) -> TaskFacts:
        return self.shapes.task(await self.call(self.NAMES["cancel"], self._task(task_id)))

    def subscribe(self, task_id: str, last_event_id: int | None = None) -> Events:
        return self.open_stream(self.NAMES["subscribe"], self._task(task_id), last_event_id)

    async def list_tasks(self, **filters: Any) -> Page:
        """ListTasks with its 1.0 fields (`status` in the 0.3 spelling)."""
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
        card = await self.call(self.NAMES["card"], {} if self.version == "1.0" else None)
        assert ("supportedInterfaces" in card) == (self.version == "1.0"), card
        name: str = card["name"]
        return name


# --- the versions ----------------------------------------------------------------------------


class JsonV03(Wire):
    """A2A 0.3 JSON-RPC requests: slash method names, the canonical `kind` shapes."""

    version = "0.3"
    lacks = frozenset({"list_tasks"})
    shapes = CanonicalShapes
    NAMES = {
        "send": "message/send",
        "stream": "message/stream",
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "subscribe": "tasks/resubscribe",
        "card": "agent/getAuthenticatedExtendedCard",
    }

    def _message(self, text: str, **ids: str | None) -> Json:
        parts = [{"kind": "text", "text": text}]
        message = {"kind": "message", "messageId": new_id(), "role": "user", "parts": parts}
        return {**message, **_given(**ids)}

    def _configuration(self, blocking: bool) -> Json | None:
        return None if blocking else {"blocking": False}

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


class ProtoV10(Wire):
    """A2A 1.0 requests: the ProtoJSON of a2a.proto's request messages, whatever the binding."""

    version = "1.0"
    shapes = ProtoShapes
    NAMES = {
        "send": "SendMessage",
        "stream": "SendStreamingMessage",
        "get": "GetTask",
        "cancel": "CancelTask",
        "subscribe": "SubscribeToTask",
        "card": "GetExtendedAgentCard",
    }

    def _message(self, text: str, **ids: str | None) -> Json:
        message = {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": text}]}
        return {**message, **_given(**ids)}

    def _configuration(self, blocking: bool) -> Json | None:
        return None if blocking else {"returnImmediately": True}

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


class ProtoV03(Wire):
    """A2A 0.3 proto requests (HTTP+JSON under /v1 and the 0.3 gRPC service): resource names,
    `content` for a message's parts, `blocking` always said (proto3 reads none as false)."""

    version = "0.3"
    lacks = frozenset({"list_tasks"})
    zero_history_is_all = True
    shapes = Proto03Shapes
    PARTS = "content"
    NAMES = {
        "send": "SendMessage",
        "stream": "SendStreamingMessage",
        "get": "GetTask",
        "cancel": "CancelTask",
        "subscribe": "TaskSubscription",
        "card": "GetAgentCard",
    }

    def _message(self, text: str, **ids: str | None) -> Json:
        message = {"messageId": new_id(), "role": "ROLE_USER", "content": [{"text": text}]}
        return {**message, **_given(**ids)}

    def _configuration(self, blocking: bool) -> Json | None:
        return {"blocking": blocking}

    def _task(self, task_id: str) -> Json:
        return {"name": f"tasks/{task_id}"}

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


# --- the transports --------------------------------------------------------------------------


class JsonRpcTransport(Wire):
    """JSON-RPC over HTTP: POST / with a request object naming the version in `A2A-Version`;
    streams as SSE of response objects."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    def _headers(self, version: str | None = None, **extra: str) -> dict[str, str]:
        return {**JSON_HEADERS, "A2A-Version": version or self.version, **extra}

    @staticmethod
    def _refused(error: Json) -> Refused:
        """A JSON-RPC error object: 0.3 data lists field problems, 1.0 data holds details."""
        data = error.get("data")
        reason = BY_CODE.get(error["code"], str(error["code"]))
        if isinstance(data, list) and data and "@type" in data[0]:
            info, fields = error_details(data)
            assert info in (None, reason), error
        else:
            fields = [p["field"] for p in data] if error["code"] == -32602 and data else []
        return Refused(reason, error["message"], fields)

    async def call(self, method: str, fields: Any, *, version: str | None = None) -> Any:
        body = json.dumps(request(method, fields))
        response = await self.http.post("/", content=body, headers=self._headers(version))
        assert response.status_code in HTTP_STATUS_OF_REFUSALS, response.text
        assert response.headers["content-type"].startswith("application/json")
        assert version is not None or response.headers["a2a-version"] == self.version
        answer: Json = response.json()
        assert answer["jsonrpc"] == "2.0" and answer["id"] == 1
        assert ("result" in answer) != ("error" in answer), answer
        if "error" in answer:
            raise self._refused(answer["error"])
        return answer["result"]

    @asynccontextmanager
    async def open_stream(
        self, method: str, fields: Json, last_event_id: int | None = None
    ) -> AsyncIterator[EventStream]:
        body = json.dumps(request(method, fields))
        headers = self._headers(**_replay_from(last_event_id))
        async with self.http.stream("POST", "/", content=body, headers=headers) as response:
            assert response.status_code in HTTP_STATUS_OF_REFUSALS
            if not response.headers["content-type"].startswith("text/event-stream"):
                await response.aread()
                raise self._refused(response.json()["error"])
            assert response.headers["a2a-version"] == self.version

            async def events() -> AsyncIterator[EventFacts]:
                async for event in SseStream(response):
                    if "error" in event.data:
                        raise self._refused(event.data["error"])
                    yield self.shapes.event(event.data["result"], event.id)

            yield await EventStream.open(events())


def _fill(template: str, fields: Json) -> tuple[str, Json]:
    """The path of `template` with its `{field}`s taken from `fields`, and the fields left."""
    rest = dict(fields)
    head, *parts = template.split("{")
    path = head
    for part in parts:
        name, _, tail = part.partition("}")
        path += str(rest.pop(name)) + tail
    return path, rest


def _status_reason(status: str) -> str:
    """The reason of an error without an ErrorInfo, by its google.rpc.Code name."""
    return {"INVALID_ARGUMENT": "INVALID_PARAMS", "NOT_FOUND": "METHOD_NOT_FOUND"}.get(
        status, status
    )


class RestTransport(Wire):
    """HTTP+JSON: a route per method (`ROUTES`: verb and path template; the fields not in the
    path go in the body of a POST, the query otherwise); errors as google.rpc.Status."""

    ROUTES: ClassVar[dict[str, tuple[str, str]]]

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    def _request(self, method: str, fields: Json, version: str | None) -> tuple[str, str, Json]:
        verb, template = self.ROUTES[method]
        path, rest = _fill(template, fields or {})
        headers = {"A2A-Version": version or self.version}
        options: Json = {"headers": headers}
        if verb == "POST":
            options["content"] = json.dumps(rest)
            headers["Content-Type"] = A2A_JSON
        elif rest:
            options["params"] = {k: json.dumps(v).strip('"') for k, v in rest.items()}
        return verb, path, options

    def _refused(self, http_status: int, body: Json) -> Refused:
        """A google.rpc.Status body; in 0.3 also with the JSON-RPC `code`, the `message` and
        the error's `type` name beside it, which 0.3 clients read."""
        error = body["error"]
        assert error["code"] == http_status
        reason, fields = error_details(error["details"])
        refused = Refused(reason or _status_reason(error["status"]), error["message"], fields)
        assert ERRORS[refused.reason][1:] == (http_status, error["status"]), error
        if self.version == "0.3":
            typed = (ERRORS[refused.reason][0], error["message"], sdk_type_name(refused.reason))
            assert (body["code"], body["message"], body["type"]) == typed, body
        else:
            assert set(body) == {"error"}, body
        return refused

    async def call(self, method: str, fields: Any, *, version: str | None = None) -> Any:
        verb, path, options = self._request(method, fields, version)
        response = await self.http.request(verb, path, **options)
        if response.status_code != 200:
            raise self._refused(response.status_code, response.json())
        assert response.headers["content-type"] == MEDIA_TYPES[self.version]
        assert response.headers["a2a-version"] == self.version
        return response.json()

    @asynccontextmanager
    async def open_stream(
        self, method: str, fields: Json, last_event_id: int | None = None
    ) -> AsyncIterator[EventStream]:
        verb, path, options = self._request(method, fields, None)
        options["headers"].update(_replay_from(last_event_id))
        async with self.http.stream(verb, path, **options) as response:
            if response.status_code != 200:
                await response.aread()
                raise self._refused(response.status_code, response.json())
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers["a2a-version"] == self.version

            async def events() -> AsyncIterator[EventFacts]:
                async for event in SseStream(response):
                    if "error" in event.data:
                        raise self._refused(event.data["error"]["code"], event.data)
                    yield self.shapes.event(event.data, event.id)

            yield await EventStream.open(events())


class GrpcTransport(Wire):
    """gRPC with the generated stubs: the fields as the request message (ProtoJSON), the
    response as ProtoJSON; errors as status codes with a google.rpc.Status in the trailers."""

    pb: ClassVar[ModuleType]
    stubs: ClassVar[ModuleType]

    metadata: tuple[tuple[str, str], ...] = ()
    """Sent with every call (credentials)."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.stub = self.stubs.A2AServiceStub(channel)
        self.methods = self.pb.DESCRIPTOR.services_by_name["A2AService"].methods_by_name

    def _invoke(self, method: str, fields: Json | None, version: str | None) -> Any:
        request_type = message_factory.GetMessageClass(self.methods[method].input_type)
        message = json_format.ParseDict(fields or {}, request_type())
        metadata = (("a2a-version", version),) if version else ()
        return getattr(self.stub, method)(message, metadata=metadata + self.metadata)

    def _refused(self, error: grpc.aio.AioRpcError) -> Refused:
        """A status with a google.rpc.Status in the trailers; in 0.3 its message says the
        error's type name first (`TaskNotFoundError: ...`), which 0.3 clients read."""
        trailers = dict(error.trailing_metadata() or ())
        status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
        assert status.code == error.code().value[0]
        reason, fields = error_details(json_format.MessageToDict(status).get("details", []))
        code = error.code().name
        refused = Refused(reason or _status_reason(code), status.message, fields)
        assert ERRORS[refused.reason][2] == code, (refused.reason, code)
        typed = f"{sdk_type_name(refused.reason)}: " if self.version == "0.3" else ""
        assert error.details() == typed + status.message, error.details()
        return refused

    async def call(self, method: str, fields: Any, *, version: str | None = None) -> Any:
        call = self._invoke(method, fields, version)
        try:
            response: ProtoMessage = await call
        except grpc.aio.AioRpcError as exc:
            raise self._refused(exc) from None
        assert ("a2a-version", self.version) in tuple(await call.initial_metadata())
        return json_format.MessageToDict(response)

    @asynccontextmanager
    async def open_stream(
        self, method: str, fields: Json, last_event_id: int | None = None
    ) -> AsyncIterator[EventStream]:
        assert last_event_id is None, "gRPC streams carry no event numbers"
        call = self._invoke(method, fields, None)

        async def events() -> AsyncIterator[EventFacts]:
            try:
                async for response in call:
                    yield self.shapes.event(json_format.MessageToDict(response), None)
            except grpc.aio.AioRpcError as exc:
                raise self._refused(exc) from None

        try:
            yield await EventStream.open(events())
        finally:
            call.cancel()


# --- the (binding, version) pairs ------------------------------------------------------------


class JsonRpc03(JsonRpcTransport, JsonV03):
    name = "jsonrpc-0.3"


class JsonRpc10(JsonRpcTransport, ProtoV10):
    name = "jsonrpc-1.0"


class Rest03(RestTransport, ProtoV03):
    name = "rest-0.3"
    ROUTES = {
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


class Rest10(RestTransport, ProtoV10):
    name = "rest-1.0"
    ROUTES = {
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


class Grpc03(GrpcTransport, ProtoV03):
    name = "grpc-0.3"
    lacks = frozenset({"list_tasks", "replay"})
    pb: ClassVar[ModuleType] = pb3
    stubs: ClassVar[ModuleType] = rpc3


class Grpc10(GrpcTransport, ProtoV10):
    name = "grpc-1.0"
    lacks = frozenset({"replay"})
    pb: ClassVar[ModuleType] = pb10
    stubs: ClassVar[ModuleType] = rpc10


WIRES: tuple[type[Wire], ...] = (JsonRpc03, JsonRpc10, Rest03, Rest10, Grpc03, Grpc10)
"""Every (binding, version) the server answers, as the suite speaks to it."""


@dataclass(frozen=True, slots=True)
class Server:
    """Where one live server answers: its HTTP base URL and its gRPC target."""

    base_url: str
    grpc_target: str


@asynccontextmanager
async def connect_wire(
    kind: type[Wire], server: Server, headers: dict[str, str] | None = None
) -> AsyncIterator[Wire]:
    """A `kind` wire to `server`, sending `headers` (gRPC: metadata) with every request."""
    if issubclass(kind, GrpcTransport):
        async with grpc.aio.insecure_channel(server.grpc_target) as channel:
            wire = kind(channel)
            wire.metadata = tuple((k.lower(), v) for k, v in (headers or {}).items())
            yield wire
        return
    async with httpx.AsyncClient(
        base_url=server.base_url, timeout=SAFETY_TIMEOUT, headers=headers
    ) as http:
        yield kind(http)  # type: ignore[call-arg]
