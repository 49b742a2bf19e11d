"""GrpcBinding: the A2A 1.0 and 0.3 gRPC services on a grpc.aio server, over A2AService."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import FileDescriptor, MethodDescriptor
from google.protobuf.message import Message as ProtoMessage
from google.rpc import error_details_pb2, status_pb2  # noqa: F401  (ErrorInfo, BadRequest in Any)
from pydantic_core import from_json
from starlette.datastructures import Headers

from accord.codecs import VERSION_HEADER, ProtocolVersion, V10Codec, check_named_version
from accord.codecs.base import Method, field_error
from accord.codecs.rest import http_status
from accord.codecs.rest_v0_3 import REST_V0_3
from accord.codecs.v1_0 import error_details
from accord.errors import A2AError, InternalError
from accord.grpc.generated.v0_3 import a2a_pb2 as v0_3_pb2
from accord.grpc.generated.v1_0 import a2a_pb2 as v1_0_pb2
from accord.runtime import EventRecord
from accord.server.call_context import CallContext
from accord.server.service import A2AService
from accord.server.sse import close_stream

log = logging.getLogger("accord.server")

Fields = Callable[[dict[str, Any]], dict[str, Any]]

_STATUS_DETAILS = "grpc-status-details-bin"


@dataclass(frozen=True, slots=True)
class GrpcService:
    """One version's `A2AService`: its proto file, and for each RPC the codec `Method` that
    decodes its request's ProtoJSON and encodes its result (`fields` turns the request's
    ProtoJSON into the fields that method reads)."""

    version: ProtocolVersion
    file: FileDescriptor
    methods: Mapping[str, Method]
    fields: Mapping[str, Fields]
    hint: str

    @property
    def name(self) -> str:
        return str(self.file.services_by_name["A2AService"].full_name)


def _same(fields: dict[str, Any]) -> dict[str, Any]:
    return fields


def _named(key: str, *fields: str) -> Fields:
    """A 0.3 request naming its resource (`tasks/{id}`, `tasks/{id}/pushNotificationConfigs/
    {configId}`) in `key`, as the fields of the HTTP+JSON route, whose path holds `fields`."""
    pattern = ["tasks", "{}", "pushNotificationConfigs", "{}"][: 2 * len(fields)]

    def convert(request: dict[str, Any]) -> dict[str, Any]:
        rest = {k: v for k, v in request.items() if k != key}
        parts = str(request.get(key, "")).split("/")
        values = parts[1::2]
        if len(parts) != len(pattern) or parts[::2] != pattern[::2] or not all(values):
            raise field_error(key, f"must be {'/'.join(pattern).format(*fields)}")
        return {**rest, **dict(zip(fields, values, strict=True))}

    return convert


V1_0 = GrpcService(
    version=ProtocolVersion.V1_0,
    file=v1_0_pb2.DESCRIPTOR,
    methods=V10Codec.methods,
    fields={},
    hint=" (the A2A 0.3 service is a2a.v1.A2AService)",
)
"""A2A 1.0 over gRPC: `lf.a2a.v1.A2AService`, the requests and results of 1.0 JSON-RPC."""

V0_3 = GrpcService(
    version=ProtocolVersion.V0_3,
    file=v0_3_pb2.DESCRIPTOR,
    methods={route.name: route.method for route in REST_V0_3.routes},
    fields={
        "GetTask": _named("name", "id"),
        "CancelTask": _named("name", "id"),
        "TaskSubscription": _named("name", "id"),
        "CreateTaskPushNotificationConfig": _named("parent", "id"),
        "GetTaskPushNotificationConfig": _named("name", "id", "configId"),
        "ListTaskPushNotificationConfig": _named("parent", "id"),
        "DeleteTaskPushNotificationConfig": _named("name", "id", "configId"),
    },
    hint=" (the A2A 1.0 service is lf.a2a.v1.A2AService)",
)
"""A2A 0.3 over gRPC: `a2a.v1.A2AService`, the 0.3 proto's shapes of its HTTP+JSON routes."""

GRPC_SERVICES = (V1_0, V0_3)


class GrpcBinding:
    """The gRPC method handlers of every version's A2AService, calling one `A2AService`.

    `a2a-version` metadata is checked against the service called (a missing one is served in
    the service's version); `a2a-extensions` activates extensions. `base_url` is where the
    HTTP bindings are, for the cards this binding returns.
    """

    def __init__(self, service: A2AService, base_url: str) -> None:
        self.service = service
        self.base_url = base_url

    def handlers(self) -> list[grpc.GenericRpcHandler]:
        """One generic handler per served version's service."""
        return [
            grpc.method_handlers_generic_handler(
                spec.name,
                {
                    method.name: self._handler(spec, method)
                    for method in spec.file.services_by_name["A2AService"].methods
                },
            )
            for spec in GRPC_SERVICES
        ]

    def _handler(self, spec: GrpcService, rpc: MethodDescriptor) -> grpc.RpcMethodHandler:
        request_type = message_factory.GetMessageClass(rpc.input_type)
        response_type = message_factory.GetMessageClass(rpc.output_type)
        method = spec.methods[rpc.name]
        fields = spec.fields.get(rpc.name, _same)

        async def start(request: ProtoMessage, context: grpc.aio.ServicerContext) -> Any:
            metadata = _metadata(context)
            check_named_version(
                spec.version,
                metadata.get(VERSION_HEADER) or None,
                f"{spec.name}/{rpc.name}",
                kind="RPC",
                hint=spec.hint,
            )
            activation = self.service.activate_extensions(metadata)
            await context.send_initial_metadata(
                [
                    (name.lower(), value)
                    for name, value in {
                        VERSION_HEADER: spec.version.value,
                        **activation.response_headers(),
                    }.items()
                ]
            )
            request_fields = fields(json_format.MessageToDict(request))
            params = method.decode(request_fields)
            call = CallContext(
                base_url=self.base_url,
                headers=metadata,
                tenant=request_fields.get("tenant") or None,
                extensions=activation.active,
            )
            return await method.operation(self.service)(params, call)

        def response(encoded: bytes) -> ProtoMessage:
            return json_format.ParseDict(
                from_json(encoded) or {}, response_type(), ignore_unknown_fields=True
            )

        async def unary(request: ProtoMessage, context: grpc.aio.ServicerContext) -> Any:
            try:
                return response(method.encode(await start(request, context)))
            except Exception as exc:
                await _abort(context, exc)

        async def stream(
            request: ProtoMessage, context: grpc.aio.ServicerContext
        ) -> AsyncIterator[ProtoMessage]:
            records: AsyncIterator[EventRecord] | None = None
            try:
                records = await start(request, context)
                async for record in records:
                    if record.error is not None:
                        raise record.error
                    yield response(method.encode(record))
            except Exception as exc:
                await _abort(context, exc)
            finally:
                if records is not None:
                    await close_stream(records)

        if method.streaming:
            return grpc.unary_stream_rpc_method_handler(
                stream,
                request_deserializer=request_type.FromString,
                response_serializer=response_type.SerializeToString,
            )
        return grpc.unary_unary_rpc_method_handler(
            unary,
            request_deserializer=request_type.FromString,
            response_serializer=response_type.SerializeToString,
        )


def _metadata(context: grpc.aio.ServicerContext) -> Headers:
    """The request's text metadata, case-insensitive; repeated keys joined by commas."""
    joined: dict[str, str] = {}
    for key, value in context.invocation_metadata() or ():
        if isinstance(value, str):
            joined[key] = f"{joined[key]},{value}" if key in joined else value
    return Headers(joined)


def grpc_status(error: A2AError) -> grpc.StatusCode:
    """The gRPC status of `error` (spec 1.0, section 5.4, the table HTTP+JSON shares)."""
    return grpc.StatusCode[http_status(error)[1]]


async def _abort(context: grpc.aio.ServicerContext, exc: Exception) -> None:
    """End the call with `exc` as a gRPC status, its google.rpc.Status in the trailers."""
    if isinstance(exc, grpc.aio.AbortError):
        raise exc
    if isinstance(exc, A2AError):
        error = exc
    else:
        log.exception("unexpected error serving a gRPC request", exc_info=exc)
        error = InternalError()
    code = grpc_status(error)
    status = json_format.ParseDict(
        {"code": code.value[0], "message": error.message, "details": error_details(error)},
        status_pb2.Status(),
    )
    await context.abort(
        code, error.message, trailing_metadata=((_STATUS_DETAILS, status.SerializeToString()),)
    )


async def start_server(binding: GrpcBinding, host: str, port: int) -> tuple[grpc.aio.Server, int]:
    """A started grpc.aio server answering `binding` on `host:port` (0: any free port), and
    the port it listens on."""
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(binding.handlers())
    bound = server.add_insecure_port(f"{host}:{port}")
    await server.start()
    return server, bound
