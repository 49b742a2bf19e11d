"""JsonRpcBinding: A2A over JSON-RPC 2.0 on HTTP POST, with SSE for the streaming methods."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from pydantic_core import from_json
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from accord.codecs import JSONRPC_CODECS as CODECS
from accord.codecs import (
    VERSION_HEADER,
    JsonRpcCodec,
    Method,
    check_named_version,
    jsonrpc_codec_of,
    named_version,
    version_hint,
)
from accord.errors import (
    A2AError,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
)
from accord.server.call_context import CallContext
from accord.server.http_request import (
    DEFAULT_MAX_BODY_BYTES,
    BodyTooLarge,
    JsonResponse,
    WrongContentType,
    check_content_type,
    last_event_id,
    read_body,
)
from accord.server.service import A2AService
from accord.server.sse import record_frames, sse_event, sse_response
from accord.types import A2AModel, JsonRpcId

log = logging.getLogger("accord.server")

_HTTP_STATUS: dict[type[A2AError], int] = {BodyTooLarge: 413, WrongContentType: 415}
_NO_QUERY: Mapping[str, str] = {}


class JsonRpcBinding:
    """The Starlette endpoint answering the JSON-RPC methods of every A2A version on one URL.

    The method name picks the version's codec (see docs/versions.md); the service behind it
    is the same for all of them.
    """

    def __init__(self, service: A2AService, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES):
        self.service = service
        self.max_body_bytes = max_body_bytes

    async def handle(self, request: Request) -> Response:
        request_id: JsonRpcId = None
        extension_headers: dict[str, str] = {}
        headers = request.headers
        query = request.query_params if request.scope.get("query_string") else _NO_QUERY
        named = named_version(headers, query)
        # Errors before the method is known are shaped as the version the request names.
        codec = CODECS[version_hint(headers, query)]
        try:
            check_content_type(request)
            call = _parse_object(await read_body(request, self.max_body_bytes))
            request_id = _request_id(call)
            method_name = _method(call)
            activation = self.service.activate_extensions(headers)
            extension_headers = activation.response_headers()
            context = CallContext(
                base_url=lambda: str(request.base_url),
                headers=headers,
                last_event_id=last_event_id(request),
                extensions=activation.active,
            )
            found = jsonrpc_codec_of(method_name, named)
            if found is None:
                added = self.service.extension_method(method_name)
                if added is None:
                    raise MethodNotFound(
                        f"method {method_name!r} does not exist; see the A2A method list"
                    )
                result = await added(call.get("params"), context)
                body = _success(_id_json(request_id), _plain_json(result))
                return _json_response(body, codec, headers=extension_headers)
            codec, method = found, found.methods[method_name]
            check_named_version(codec.version, named, method_name)
            params = _decode(method, call.get("params"), method_name)
            result = await method.operation(self.service)(params, context)
            if not method.streaming:
                body = _success(_id_json(request_id), method.encode(result))
                return _json_response(body, codec, headers=extension_headers)
        except A2AError as exc:
            status = _HTTP_STATUS.get(type(exc), 200)
            return _error_response(codec, request_id, exc, status, extension_headers)
        except ClientDisconnect:
            return Response(status_code=400)
        except Exception:
            log.exception("unexpected error serving a JSON-RPC request")
            return _error_response(codec, request_id, InternalError())
        id_json = _id_json(request_id)
        frames = record_frames(
            result,
            lambda record: _success(id_json, method.encode(record)),
            lambda error: sse_event(_error_json(codec, id_json, error)),
        )
        return sse_response(frames, {VERSION_HEADER: codec.version, **extension_headers})


def _parse_object(body: bytes) -> dict[str, Any]:
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


def _decode(method: Method, params: Any, name: str) -> Any:
    try:
        return method.decode(params)
    except InvalidParams as exc:
        raise InvalidParams(f"invalid params for {name}: {exc.message}", data=exc.data) from None


def _id_json(request_id: JsonRpcId) -> bytes:
    if type(request_id) is int:  # the usual id, without the JSON encoder's setup
        return str(request_id).encode()
    return json.dumps(request_id).encode()


def _success(id_json: bytes, result_json: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + id_json + b',"result":' + result_json + b"}"


def _error_json(codec: JsonRpcCodec, id_json: bytes, error: A2AError) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + id_json + b',"error":' + codec.error(error) + b"}"


def _plain_json(result: Any) -> bytes:
    """The JSON of an extension method's result (protocol objects in their wire form)."""
    if isinstance(result, A2AModel):
        return result.to_json()
    return json.dumps(result, separators=(",", ":")).encode()


def _json_response(
    body: bytes,
    codec: JsonRpcCodec,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> Response:
    return JsonResponse(body, status_code, {VERSION_HEADER: codec.version, **(headers or {})})


def _error_response(
    codec: JsonRpcCodec,
    request_id: JsonRpcId,
    error: A2AError,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> Response:
    body = _error_json(codec, _id_json(request_id), error)
    return _json_response(body, codec, status_code, headers)
