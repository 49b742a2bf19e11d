"""Property-based fuzzing of every binding of a real server, on the memory and SQLite stores:
whatever headers, query string and body a client sends, it never gets a 5xx, an internal
error (JSON-RPC -32603, HTTP+JSON/gRPC INTERNAL) or a stream that hangs.

`ACCORD_FUZZ_EXAMPLES` sets the requests per binding and store (default 150); a longer run by
hand: `ACCORD_FUZZ_EXAMPLES=20000 .venv/bin/pytest tests/test_fuzz.py -k sqlite`.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import grpc
import httpx
import pytest
from google.protobuf import json_format, message_factory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accord import Agent, create_app
from accord.codecs import JSONRPC_CODECS, ProtocolVersion
from accord.codecs.rest_v0_3 import REST_V0_3
from accord.codecs.rest_v1_0 import REST_V1_0
from accord.grpc.services import GRPC_SERVICES
from accord.samples import echo
from accord.store.sql import SqlTaskStore, create_sql_engine
from accord.types import TransportProtocol
from agents_for_tests import SAFETY_TIMEOUT
from rpc import request as rpc_request
from rpc import send_params, served

EXAMPLES = int(os.environ.get("ACCORD_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# --- values ----------------------------------------------------------------------------------

NASTY = [
    "",
    " ",
    "0",
    "-1",
    "1.5",
    "²",
    "١٢",
    "9" * 5000,
    "9" * 5000 + ".0",
    "1." + "9" * 5000,
    str(2**63),
    str(2**63 - 1),
    str(2**64),
    "0.3",
    "1.0",
    "0.2.5",
    "99.99",
    "null",
    "[]",
    "{}",
    "9999-12-31T23:59:59-05:00",
    "0001-01-01T00:00:00+14:00",
    "2026-01-01T00:00:00Z",
    "2026-13-45",
    "TASK_STATE_WORKING",
    "TASK_STATE_UNSPECIFIED",
    "completed",
    base64.urlsafe_b64encode(b"[" * 5000 + b"]" * 5000).decode(),
    base64.urlsafe_b64encode(b'["9999-12-31T23:59:59-05:00","x"]').decode(),
    base64.urlsafe_b64encode(b'["2026-01-01T00:00:00+00:00",1]').decode(),
    "http://[::1",
    "http://127.0.0.1:9/hook",
    "https://example.com/" + "a" * 3000,
]
# Header values: visible Latin-1, as HTTP carries them.
_HEADER_CHARS = st.characters(
    codec="latin-1", exclude_categories=("Cc",), exclude_characters="\x7f"
)
# (no white space around a value: HTTP/1.1 clients cannot send it)
header_values = st.one_of(st.sampled_from(NASTY), st.text(_HEADER_CHARS, max_size=40)).map(
    lambda value: value.strip(" \t")
)
texts = st.one_of(st.sampled_from(NASTY), st.text(max_size=30))
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 10**400]),
)

FIELDS = [
    "message", "messageId", "role", "parts", "kind", "text", "id", "taskId", "contextId",
    "historyLength", "pageSize", "pageToken", "statusTimestampAfter", "status", "state",
    "configuration", "pushNotificationConfig", "url", "token", "metadata", "data", "file",
    "uri", "bytes", "mimeType", "mediaType", "raw", "name", "blocking", "returnImmediately",
    "acceptedOutputModes", "extensions", "referenceTaskIds", "tenant", "includeArtifacts",
    "authentication", "schemes", "scheme", "credentials", "request", "parent", "configId",
    "sessionId", "type", "pushNotification", "append", "lastChunk", "artifact", "params",
]  # fmt: skip
keys = st.one_of(st.sampled_from(FIELDS), st.text(max_size=12))
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn, base: Any) -> Any:
    """`base` (a valid request's JSON) with a few members replaced, added or removed."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    value = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(0, 3))):
        containers = list(_containers(value))
        if not containers:
            break
        container = draw(st.sampled_from(containers))
        if isinstance(container, dict):
            key = draw(st.one_of(st.sampled_from(sorted(container) or FIELDS), keys))
            if draw(st.booleans()) and key in container:
                del container[key]
            else:
                container[key] = draw(json_values)
        elif container:
            container[draw(st.integers(0, len(container) - 1))] = draw(json_values)
    return value


def _containers(value: Any) -> Iterator[dict[str, Any] | list[Any]]:
    if isinstance(value, dict | list):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from _containers(item)


# --- the server ------------------------------------------------------------------------------


@dataclass
class Target:
    http: httpx.Client
    grpc: grpc.Channel
    task_id: str


@pytest.fixture(scope="module", params=["memory", "sqlite"])
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target]:
    store = None
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("fuzz") / "accord.db"
        store = SqlTaskStore(create_sql_engine(f"sqlite:///{path}"))
    agent = Agent(
        echo.agent.executor,
        name="Fuzzed echo",
        push_notifications=True,
        extensions=echo.agent.extensions,
    )
    app = create_app(agent, store=store, grpc_port=0)
    with served(app) as base_url:
        interfaces = app.state.service.interfaces.served_interfaces(base_url + "/")
        grpc_url = next(i.url for i in interfaces if i.transport == TransportProtocol.GRPC)
        with httpx.Client(base_url=base_url, timeout=SAFETY_TIMEOUT) as http:
            sent = http.post("/", json=rpc_request("message/send", send_params("fuzz")))
            task_id = sent.json()["result"]["id"]
            with grpc.insecure_channel(grpc_url) as channel:
                yield Target(http, channel, task_id)


# --- requests --------------------------------------------------------------------------------

_MESSAGE_03 = send_params("hello")
_MESSAGE_10 = {
    "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]},
    "configuration": {"returnImmediately": False},
}
_MESSAGE_01 = {
    "id": "t-1",
    "message": {"role": "user", "parts": [{"type": "text", "text": "hello"}]},
}
_PUSH = {"url": "http://127.0.0.1:9/hook", "token": "t"}


def _base_params(version: ProtocolVersion, method: str, task_id: str) -> Any:
    """A valid-looking `params` for `method`, to mutate."""
    if version is ProtocolVersion.V1_0:
        if method.startswith("Send"):
            return _MESSAGE_10
        if "PushNotificationConfig" in method:
            return {"taskId": task_id, "id": "c-1", **_PUSH}
        if method == "ListTasks":
            return {"pageSize": 10, "statusTimestampAfter": "2026-01-01T00:00:00Z"}
        return {"id": task_id, "historyLength": 2}
    if version is ProtocolVersion.V0_1:
        if method.startswith("tasks/send"):
            return _MESSAGE_01
        return {"id": task_id, "pushNotificationConfig": _PUSH}
    if method.startswith("message/"):
        return _MESSAGE_03
    if "pushNotificationConfig" in method:
        return {"taskId": task_id, "id": task_id, "pushNotificationConfig": _PUSH}
    return {"id": task_id, "historyLength": 1}


def _methods(version: ProtocolVersion) -> list[str]:
    return sorted(JSONRPC_CODECS[version].methods)


@st.composite
def headers(draw: st.DrawFn, version: str | None = None) -> dict[str, str | bytes]:
    names = ["A2A-Version", "Last-Event-ID", "A2A-Extensions", "X-A2A-Extensions", "Accept"]
    chosen: dict[str, str | bytes] = {}
    for name in names:
        if draw(st.integers(0, 3)) == 0:
            chosen[name] = draw(header_values).encode()
    if version is not None and "A2A-Version" not in chosen and draw(st.booleans()):
        chosen["A2A-Version"] = version
    content_type = st.sampled_from(
        ["application/json", "application/a2a+json", "text/plain", "application/json; x=1"]
    )
    chosen["Content-Type"] = draw(st.one_of(content_type, header_values)).encode()
    return chosen


@st.composite
def queries(draw: st.DrawFn) -> list[tuple[str, str]]:
    names = st.one_of(
        st.sampled_from(
            [
                "A2A-Version",
                "statusTimestampAfter",
                "pageToken",
                "pageSize",
                "historyLength",
                "contextId",
                "status",
                "includeArtifacts",
                "tenant",
                "id",
            ]
        ),
        st.text(max_size=8),
    )
    return draw(st.lists(st.tuples(names, texts), max_size=4))


@st.composite
def bodies(draw: st.DrawFn, params: Any) -> bytes:
    """A JSON body made of `params` mutated, now and then raw bytes."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.binary(max_size=64))
    return json.dumps(draw(mutated(params)), allow_nan=True).encode()


def _check_http(response: httpx.Response) -> None:
    body = response.read()
    assert response.status_code < 500, (response.status_code, body[:500])
    text = body.decode("utf-8", "replace")
    assert '"code":-32603' not in text.replace(" ", ""), text[:500]
    assert '"INTERNAL"' not in text, text[:500]


def _send(target: Target, verb: str, path: str, **options: Any) -> None:
    with target.http.stream(verb, path, **options) as response:
        _check_http(response)


# --- the properties --------------------------------------------------------------------------


@pytest.mark.parametrize("version", [ProtocolVersion.V0_3, ProtocolVersion.V1_0])
@FUZZ
@given(data=st.data())
def test_json_rpc_never_fails_inside(target: Target, version: ProtocolVersion, data: Any) -> None:
    versions = [version, ProtocolVersion.V0_1] if version is ProtocolVersion.V0_3 else [version]
    method_version = data.draw(st.sampled_from(versions))
    method = data.draw(st.one_of(st.sampled_from(_methods(method_version)), st.text(max_size=20)))
    params = _base_params(method_version, method, target.task_id)
    envelope: Any = data.draw(mutated({"jsonrpc": "2.0", "id": 1, "method": method}))
    if isinstance(envelope, dict) and data.draw(st.integers(0, 4)):
        envelope["params"] = data.draw(mutated(params))
    body = (
        data.draw(st.binary(max_size=64))
        if data.draw(st.integers(0, 19)) == 0
        else json.dumps(envelope, allow_nan=True).encode()
    )
    _send(
        target,
        "POST",
        "/",
        content=body,
        headers=data.draw(headers(version.value)),
        params=data.draw(queries()),
    )


def _rest_paths(prefix: str, template: str, task_id: str, data: Any) -> str:
    ids = st.one_of(st.just(task_id), st.text(min_size=1, max_size=20))
    path = template
    for field in ("{id}", "{taskId}", "{id:str}", "{configId:str}"):
        if field in path:
            path = path.replace(field, quote(data.draw(ids), safe=""))
    tenant = data.draw(st.one_of(st.just(""), st.just("/acme"), st.just("/v1")))
    return (prefix or tenant) + path


@pytest.mark.parametrize("codec", [REST_V0_3, REST_V1_0], ids=["0.3", "1.0"])
@FUZZ
@given(data=st.data())
def test_http_json_never_fails_inside(target: Target, codec: Any, data: Any) -> None:
    route = data.draw(st.sampled_from(codec.routes))
    verb = data.draw(st.one_of(st.sampled_from(route.verbs), st.sampled_from(["PUT", "PATCH"])))
    path = _rest_paths(codec.prefix, route.path, target.task_id, data)
    options: dict[str, Any] = {
        "headers": data.draw(headers(codec.version.value)),
        "params": data.draw(queries()),
    }
    if verb in ("POST", "PUT", "PATCH"):
        base = _MESSAGE_10 if "message" in route.path else {"id": "c-1", **_PUSH}
        options["content"] = data.draw(bodies(base))
    _send(target, verb, path, **options)


# gRPC metadata values are printable ASCII
metadata_values = st.one_of(
    st.sampled_from([value for value in NASTY if value.isascii()]),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20),
).map(str.strip)

_GRPC_BASES: dict[str, dict[str, Any]] = {
    "SendMessage": _MESSAGE_10,
    "SendStreamingMessage": _MESSAGE_10,
    "ListTasks": {"pageSize": 3, "statusTimestampAfter": "2026-01-01T00:00:00Z"},
}


@pytest.mark.parametrize("spec", GRPC_SERVICES, ids=[s.version.value for s in GRPC_SERVICES])
@FUZZ
@given(data=st.data())
def test_grpc_never_fails_inside(target: Target, spec: Any, data: Any) -> None:
    service = spec.file.services_by_name["A2AService"]
    rpc = data.draw(st.sampled_from(list(service.methods)))
    request_type = message_factory.GetMessageClass(rpc.input_type)
    base = _GRPC_BASES.get(rpc.name) or {
        "id": target.task_id,
        "name": f"tasks/{target.task_id}",
        "taskId": target.task_id,
    }
    fields = data.draw(mutated(base))
    try:
        payload = json_format.ParseDict(
            fields, request_type(), ignore_unknown_fields=True
        ).SerializeToString()
    except (json_format.ParseError, TypeError, ValueError, OverflowError, RecursionError):
        payload = data.draw(st.binary(max_size=64))
    metadata = [
        (name, data.draw(metadata_values))
        for name in ("a2a-version", "last-event-id", "a2a-extensions")
        if data.draw(st.booleans())
    ]
    path = f"/{spec.name}/{rpc.name}"
    call: Any = (
        target.grpc.unary_stream(path) if rpc.server_streaming else target.grpc.unary_unary(path)
    )
    try:
        answer = call(payload, metadata=metadata, timeout=SAFETY_TIMEOUT)
        if rpc.server_streaming:
            list(answer)
    except grpc.RpcError as error:
        code = error.code()
        assert code not in (
            grpc.StatusCode.INTERNAL,
            grpc.StatusCode.UNKNOWN,
            grpc.StatusCode.DEADLINE_EXCEEDED,
        ), (rpc.name, fields, error.details())
