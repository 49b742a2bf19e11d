"""GrpcBinding: the A2A 1.0 and 0.3 gRPC services on a grpc.aio server, over A2AService."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import grpc
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import DecodeError
from google.protobuf.message import Message as ProtoMessage
from google.rpc import error_details_pb2, status_pb2  # noqa: F401  (ErrorInfo, BadRequest in Any)
from pydantic_core import from_json
from starlette.datastructures import Headers

from accord.codecs.error_details import error_details
from accord.codecs.error_statuses import error_status
from accord.core import ClientCertificate, Inbound
from accord.core.inbound import tenant_field
from accord.core.records import EventRecord, close_stream
from accord.errors import A2AError, InvalidParams, InvalidRequest
from accord.grpc.services import GRPC_SERVICES, GrpcService
from accord.server.http_request import error_headers
from accord.server.pipeline import Reply, RequestPipeline, Target
from accord.server.tls import TlsFiles, parsed_certificate

log = logging.getLogger("accord.server")

_STATUS_DETAILS = "grpc-status-details-bin"


class GrpcBinding:
    """The gRPC method handlers of every version's A2AService, over one request pipeline.

    The service called says the version (`a2a-version` metadata is checked against it by the
    pipeline; `a2a-extensions` activates extensions). `base_url` is where the HTTP bindings
    are, for the cards this binding returns (`http_base_url`, or the public URL).
    """

    def __init__(self, pipeline: RequestPipeline, base_url: str) -> None:
        self.pipeline = pipeline
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
        target = Target(
            method, spec.version, kind="RPC", hint=spec.hint, label=f"{rpc.name} request"
        )
        name = f"{spec.name}/{rpc.name}"

        async def start(request: ProtoMessage | None, context: grpc.aio.ServicerContext) -> Reply:
            if request is None:
                raise InvalidRequest(f"the request is not a valid {rpc.input_type.full_name}")
            metadata = _metadata(context)
            try:
                fields = spec.route_fields(rpc.name, json_format.MessageToDict(request))
            except json_format.SerializeToJsonError as exc:  # NaN or Infinity in a Struct
                raise InvalidParams(f"the request has a value JSON cannot hold: {exc}") from None
            inbound = Inbound(
                "GRPC",
                name,
                metadata,
                peer=_peer(context),
                certificate=_certificate(context),
                tenant=tenant_field(fields),
            )
            reply = await self.pipeline.run(inbound, target, fields, base_url=self.base_url)
            await context.send_initial_metadata(
                [(header.lower(), value) for header, value in reply.headers.items()]
            )
            if reply.error is not None:
                raise reply.error
            return reply

        def response(encoded: bytes) -> ProtoMessage:
            return json_format.ParseDict(
                from_json(encoded) or {}, response_type(), ignore_unknown_fields=True
            )

        async def unary(request: ProtoMessage | None, context: grpc.aio.ServicerContext) -> Any:
            try:
                reply = await start(request, context)
                assert reply.body is not None
                return response(reply.body)
            except Exception as exc:
                await self._abort(context, exc, spec)

        async def stream(
            request: ProtoMessage | None, context: grpc.aio.ServicerContext
        ) -> AsyncIterator[ProtoMessage]:
            records: AsyncIterator[EventRecord] | None = None
            try:
                records = (await start(request, context)).records
                assert records is not None
                async for record in records:
                    if record.error is not None:
                        raise record.error
                    yield response(method.encode(record))
            except Exception as exc:
                await self._abort(context, exc, spec)
            finally:
                if records is not None:
                    await close_stream(records)

        if method.streaming:
            return grpc.unary_stream_rpc_method_handler(
                stream,
                request_deserializer=partial(_parsed, request_type),
                response_serializer=response_type.SerializeToString,
            )
        return grpc.unary_unary_rpc_method_handler(
            unary,
            request_deserializer=partial(_parsed, request_type),
            response_serializer=response_type.SerializeToString,
        )

    async def _abort(
        self, context: grpc.aio.ServicerContext, exc: Exception, spec: GrpcService
    ) -> None:
        """End the call with `exc` (an unexpected one as an InternalError naming it in the log)."""
        if isinstance(exc, grpc.aio.AbortError):
            raise exc
        if not isinstance(exc, A2AError):
            exc = self.pipeline.internal_error(exc, "serving a gRPC request")
        await _abort(context, exc, spec)


def http_base_url(host: str, http_port: int | None, tls: bool) -> str:
    """Where a gRPC caller finds the HTTP bindings, served on `http_port` beside gRPC on
    `host`. grpc.aio shows a handler neither the call's `:authority` nor the address it came
    in at, so the host is the one gRPC listens on (`localhost` when that is every address);
    without `http_port` the URL names no port. `https` when the connection is TLS."""
    if _listens_everywhere(host):
        host = "localhost"
    authority = f"[{host}]" if ":" in host else host
    if http_port is not None:
        authority += f":{http_port}"
    return f"{'https' if tls else 'http'}://{authority}/"


def _listens_everywhere(host: str) -> bool:
    try:
        return not host or ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:  # a name
        return False


def _parsed(request_type: type[ProtoMessage], data: bytes) -> ProtoMessage | None:
    """The request message, or None for bytes that are not one (refused by the handler: a
    deserializer that raises makes gRPC answer INTERNAL)."""
    try:
        return request_type.FromString(data)
    except DecodeError:
        return None


def _peer(context: grpc.aio.ServicerContext) -> str | None:
    """The client's `host:port` (gRPC says `ipv4:1.2.3.4:5` or `ipv6:[::1]:5`)."""
    peer: str | None = context.peer()
    return peer.partition(":")[2] if peer and peer.startswith(("ipv4:", "ipv6:")) else peer


def _certificate(context: grpc.aio.ServicerContext) -> ClientCertificate | None:
    """The client certificate the TLS handshake verified (mutual TLS), if any."""
    pems = context.auth_context().get("x509_pem_cert")
    return parsed_certificate(pems[0]) if pems else None


def _metadata(context: grpc.aio.ServicerContext) -> Headers:
    """The request's text metadata, case-insensitive; repeated keys joined by commas."""
    joined: dict[str, str] = {}
    for key, value in context.invocation_metadata() or ():
        if isinstance(value, str):
            joined[key] = f"{joined[key]},{value}" if key in joined else value
    return Headers(joined)


def grpc_status(error: A2AError) -> grpc.StatusCode:
    """The gRPC status of `error` (spec 1.0, section 5.4)."""
    return grpc.StatusCode[error_status(error).grpc]


async def _abort(context: grpc.aio.ServicerContext, error: A2AError, spec: GrpcService) -> None:
    """End the call with `error` as a gRPC status (its message as `spec`'s version writes it),
    its google.rpc.Status in the trailers."""
    code = grpc_status(error)
    status = json_format.ParseDict(
        {"code": code.value[0], "message": error.message, "details": error_details(error)},
        status_pb2.Status(),
    )
    trailers: tuple[tuple[str, str | bytes], ...] = ((_STATUS_DETAILS, status.SerializeToString()),)
    challenge = error_headers(error).get("WWW-Authenticate")
    if challenge is not None:  # what HTTP's header would say
        trailers += (("www-authenticate", challenge),)
    await context.abort(code, spec.status_message(error), trailing_metadata=trailers)


async def start_server(
    binding: GrpcBinding, host: str, port: int, tls: TlsFiles | None = None
) -> tuple[grpc.aio.Server, int]:
    """A started grpc.aio server answering `binding` on `host:port` (0: any free port), and
    the port it listens on. With `tls` the port speaks TLS; with its `client_ca`, clients
    must present a certificate it verifies (gRPC cannot leave that optional)."""
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(binding.handlers())
    if tls is None:
        bound = server.add_insecure_port(f"{host}:{port}")
    else:
        chain, key, client_ca = tls.pem()
        credentials = grpc.ssl_server_credentials(
            [(key, chain)], root_certificates=client_ca, require_client_auth=client_ca is not None
        )
        bound = server.add_secure_port(f"{host}:{port}", credentials)
    await server.start()
    return server, bound
