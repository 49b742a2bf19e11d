"""JsonRpcBinding: A2A over JSON-RPC 2.0 on HTTP POST, with SSE for the streaming methods."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from pydantic_core import from_json
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from accord.codecs import JSONRPC_CODECS as CODECS
from accord.codecs import (
    VERSION_HEADER,
    JsonRpcCodec,
    ProtocolVersion,
    jsonrpc_codec_of,
    named_version,
    version_hint,
)
from accord.codecs.error_statuses import error_status
from accord.core import Inbound
from accord.core.inbound import tenant_field
from accord.core.records import EventRecord, opened_stream
from accord.errors import (
    A2AError,
    InvalidRequest,
    MethodNotFound,
    ParseError,
)
from accord.server.body_budget import BodyBudget
from accord.server.http_request import (
    DEFAULT_MAX_BODY_BYTES,
    JsonResponse,
    check_content_type,
    error_headers,
    peer_address,
    query_of,
    read_body,
)
from accord.server.pipeline import RequestPipeline, Target
from accord.server.sse import record_frames, sse_event, sse_response
from accord.server.tls import client_certificate
from accord.types import JsonRpcId

log = logging.getLogger("accord.server")


class JsonRpcBinding:
    """The Starlette endpoint answering the JSON-RPC methods of every A2A version on one URL.

    The method name picks the version's codec (see docs/versions.md); everything after that
    is the request pipeline's, the same for every binding. This binding frames: the
    envelope, its id and the SSE events of the streaming methods.
    """

    def __init__(
        self,
        pipeline: RequestPipeline,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        body_budget: BodyBudget | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.max_body_bytes = max_body_bytes
        self.body_budget = body_budget
        self._targets: dict[tuple[ProtocolVersion, str], Target] = {}

    async def handle(self, request: Request) -> Response:
        request_id: JsonRpcId = None
        headers = request.headers
        query = query_of(request)
        named = named_version(headers, query)
        # Errors before the method is known are shaped as the version the request names.
        codec = CODECS[version_hint(named)]
        try:
            check_content_type(request)
            call = _parse_object(await read_body(request, self.max_body_bytes, self.body_budget))
            request_id = _request_id(call)
            method_name = _method(call)
            codec, target = self._target(method_name, named, codec)
            inbound = Inbound(
                "JSONRPC",
                method_name,
                headers,
                query,
                peer=peer_address(request.scope),
                certificate=client_certificate(request.scope),
                tenant=tenant_field(call.get("params")),
            )
            reply = await self.pipeline.run(
                inbound,
                target,
                call.get("params"),
                base_url=lambda: str(request.base_url),
            )
        except A2AError as exc:
            return _error_response(codec, request_id, exc, {VERSION_HEADER: codec.version})
        except ClientDisconnect:
            return Response(status_code=400)
        except Exception as exc:
            error = self.pipeline.internal_error(exc, "reading a JSON-RPC request")
            return _error_response(codec, request_id, error, {VERSION_HEADER: codec.version})
        id_json = _id_json(request_id)
        if reply.error is not None:
            if target.method.streaming and _streams_errors(request, codec, reply.error):
                event = sse_event(_error_json(codec, id_json, reply.error))
                return sse_response(_one(event), reply.headers)
            return _error_response(codec, request_id, reply.error, reply.headers)
        if reply.records is None:
            assert reply.body is not None
            return JsonResponse(_enveloped(id_json, reply.body), 200, reply.headers)
        return await self._stream(codec, target, request_id, reply.records, reply.headers)

    async def _stream(
        self,
        codec: JsonRpcCodec,
        target: Target,
        request_id: JsonRpcId,
        records: AsyncIterator[EventRecord],
        headers: Mapping[str, str],
    ) -> Response:
        """The SSE response of a stream's `records`; where the codec answers a refusal before
        the first event as plain JSON, the response once that event is there."""
        if not codec.refused_stream_as_event:
            try:
                records = await opened_stream(records)
            except A2AError as exc:
                return _error_response(codec, request_id, exc, headers)
            except Exception as exc:
                error = self.pipeline.internal_error(exc, "opening a JSON-RPC stream")
                return _error_response(codec, request_id, error, headers)
        id_json = _id_json(request_id)
        encode = target.method.encode
        frames = record_frames(
            records,
            lambda record: _success(id_json, encode(record)),
            lambda error: sse_event(_error_json(codec, id_json, error)),
        )
        return sse_response(frames, headers)

    def _target(
        self, method_name: str, named: str | None, hint: JsonRpcCodec
    ) -> tuple[JsonRpcCodec, Target]:
        """The codec and target of `method_name` (a version's, else an extension's)."""
        codec = jsonrpc_codec_of(method_name, named)
        if codec is None:
            added = self.pipeline.extension_method(method_name)
            if added is None:
                raise MethodNotFound(
                    f"method {method_name!r} does not exist; see the A2A method list"
                )
            return hint, Target(added, hint.version, versioned=False)
        key = (codec.version, method_name)
        target = self._targets.get(key)
        if target is None:
            method = codec.methods[method_name]
            target = self._targets[key] = Target(
                method, codec.version, label=f"params for {method_name}"
            )
        return codec, target


def _streams_errors(request: Request, codec: JsonRpcCodec, error: A2AError) -> bool:
    """Whether a streaming method refused before its first event answers with one SSE event
    holding the error response rather than with the response as JSON: in the versions whose
    codec says so, when the client accepts `text/event-stream` (as every SSE client says), so
    that a client reading only events gets the error. Errors with an HTTP status of their own
    (401, 403, 413, 429, ...) keep their plain answer."""
    if not codec.refused_stream_as_event or error_status(error).jsonrpc != 200:
        return False
    return "text/event-stream" in request.headers.get("accept", "").lower()


async def _one(chunk: bytes) -> AsyncIterator[bytes]:
    yield chunk


def _parse_object(body: bytes | bytearray) -> dict[str, Any]:
    try:
        call = from_json(body)
    except ValueError as exc:
        raise ParseError(f"request body is not valid JSON: {exc}") from None
    if isinstance(call, list):
        raise InvalidRequest("batch requests are not supported; send one request object")
    if not isinstance(call, dict):
        raise InvalidRequest("the request must be a JSON object")
    return call


def _request_id(call: dict[str, Any]) -> JsonRpcId:
    if "id" not in call:
        raise InvalidRequest("the request has no id; A2A methods always answer")
    request_id = call["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
        raise InvalidRequest("id must be a string, an integer or null")
    return request_id


def _method(call: dict[str, Any]) -> str:
    if call.get("jsonrpc") != "2.0":
        raise InvalidRequest('jsonrpc must be exactly "2.0"')
    method = call.get("method")
    if not isinstance(method, str) or not method:
        raise InvalidRequest("method must be a non-empty string")
    return method


def _id_json(request_id: JsonRpcId) -> bytes:
    if type(request_id) is int:  # the usual id, without the JSON encoder's setup
        return str(request_id).encode()
    return json.dumps(request_id).encode()


def _enveloped(id_json: bytes, result_json: bytes) -> bytes | tuple[bytes, ...]:
    """The success envelope, in pieces around a large result (not copied into it)."""
    if len(result_json) < _LARGE:
        return _success(id_json, result_json)
    return (b'{"jsonrpc":"2.0","id":' + id_json + b',"result":', result_json, b"}")


_LARGE = 1024 * 1024


def _success(id_json: bytes, result_json: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + id_json + b',"result":' + result_json + b"}"


def _error_json(codec: JsonRpcCodec, id_json: bytes, error: A2AError) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + id_json + b',"error":' + codec.error(error) + b"}"


def _error_response(
    codec: JsonRpcCodec, request_id: JsonRpcId, error: A2AError, headers: Mapping[str, str]
) -> Response:
    body = _error_json(codec, _id_json(request_id), error)
    status = error_status(error).jsonrpc
    return JsonResponse(body, status, {**headers, **error_headers(error)})
