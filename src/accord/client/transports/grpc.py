"""GrpcTransport: the A2A gRPC services over a grpc.aio channel, through the codecs' ProtoJSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import grpc
import httpx
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage
from google.rpc import error_details_pb2, status_pb2  # noqa: F401  (ErrorInfo, BadRequest in Any)

from accord.client.activated import note_activated
from accord.client.card_auth import CardAuth
from accord.client.transports.base import IdentifiedEvents, Transport, decoded
from accord.codecs import ProtocolVersion
from accord.codecs.base import ClientCall, ClientCodec
from accord.codecs.error_names import error_from_typed_message
from accord.codecs.rest import error_from_status
from accord.core.outbound import inject
from accord.errors import (
    A2AClientError,
    A2AError,
    AgentUnreachable,
    InvalidParams,
    PermissionDenied,
    RateLimited,
    TaskNotFound,
    Unauthenticated,
)
from accord.grpc.services import grpc_service
from accord.types import AgentInterface, StreamEvent

P = TypeVar("P")
R = TypeVar("R")

STATUS_DETAILS = "grpc-status-details-bin"
_BY_CODE: dict[grpc.StatusCode, type[A2AError]] = {
    grpc.StatusCode.NOT_FOUND: TaskNotFound,  # the only A2A error with it (spec 1.0, 5.4)
    grpc.StatusCode.INVALID_ARGUMENT: InvalidParams,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.RESOURCE_EXHAUSTED: RateLimited,
}
"""The A2A error a status without an ErrorInfo stands for, where its code says which (0.3
servers need not send details: spec 0.3, 3.2.2, asks for status codes only)."""
_TLS_SCHEMES = ("https", "grpcs")


class GrpcTransport(Transport):
    """Calls the version's `A2AService` at the interface's `host:port` with the generated stub.

    Requests are the client codec's fields (ProtoJSON; 0.3's HTTP+JSON route fields, turned
    into the resource names of its requests) parsed into the request message; results are the
    response's ProtoJSON, decoded by the codec. The client's headers go as metadata (1.0 adds
    `a2a-version`); `https://` and `grpcs://` URLs get TLS, others a plaintext channel. A unary
    call's deadline is the httpx client's read timeout; streams have none. gRPC streams carry
    no event ids, so they cannot be resumed from one.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        interface: AgentInterface,
        codec: ClientCodec[Any],
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(http, interface, codec, headers)
        self._service = grpc_service(codec.version)
        self.target, tls = channel_target(interface.url)
        # The Client's credentials (its httpx auth) go as metadata, its certificate in TLS.
        self._auth = http.auth if isinstance(http.auth, CardAuth) else None
        self._channel = (
            grpc.aio.secure_channel(
                self.target,
                grpc.ssl_channel_credentials(*(self._auth.grpc_tls() if self._auth else ())),
            )
            if tls
            else grpc.aio.insecure_channel(self.target)
        )
        self._stub = self._service.stub(self._channel)
        self._metadata = tuple((name.lower(), value) for name, value in self._headers.items())
        self._timeout = http.timeout.read

    async def call(self, call: ClientCall[P, R], params: P) -> R:
        request = self._request(call, params)
        rpc = getattr(self._stub, call.name)
        try:
            try:
                response = await self._unary(rpc, request)
            except grpc.aio.AioRpcError as exc:
                # A refused cached token is fetched again once, as over HTTP (CardAuth).
                if exc.code() is not grpc.StatusCode.UNAUTHENTICATED or not self._renewed():
                    raise
                response = await self._unary(rpc, request)
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc, call.name) from None
        return decoded(call.decode, json_format.MessageToDict(response))

    async def stream(
        self, call: ClientCall[P, StreamEvent], params: P, last_event_id: int | None = None
    ) -> IdentifiedEvents:
        if last_event_id is not None:
            raise A2AClientError("a gRPC stream cannot be resumed from an event id")
        responses = getattr(self._stub, call.name)(
            self._request(call, params), metadata=await self._call_metadata()
        )
        try:
            note_activated(_text_metadata(await responses.initial_metadata()))
            async for response in responses:
                yield decoded(call.decode, json_format.MessageToDict(response)), None
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc, call.name) from None
        finally:
            responses.cancel()

    async def aclose(self) -> None:
        await self._channel.close()

    async def _unary(self, rpc: Any, request: ProtoMessage) -> Any:
        pending = rpc(request, metadata=await self._call_metadata(), timeout=self._timeout)
        response = await pending
        note_activated(_text_metadata(await pending.initial_metadata()))
        return response

    def _renewed(self) -> bool:
        return self._auth is not None and self._auth.renew()

    async def _call_metadata(self) -> tuple[tuple[str, str], ...]:
        metadata = self._metadata + (await self._auth.metadata() if self._auth else ())
        traced: dict[str, str] = {}
        inject(traced)  # the trace context of the moment, when traced
        return metadata + tuple(traced.items()) if traced else metadata

    def _request(self, call: ClientCall[P, Any], params: P) -> ProtoMessage:
        fields = call.encode(params) or {}
        if self.interface.tenant and self.codec.version is ProtocolVersion.V1_0:
            fields = {"tenant": self.interface.tenant, **fields}
        try:
            return self._service.request(call.name, fields)
        except json_format.ParseError as exc:
            raise A2AClientError(f"cannot send {call.name} over gRPC: {exc}") from None

    def _error(self, exc: grpc.aio.AioRpcError, rpc: str) -> Exception:
        """The A2AError of the status a call ended with (its google.rpc.Status details say
        which), else an A2AClientError naming the status."""
        code: grpc.StatusCode = exc.code()
        message = exc.details() or ""
        for key, value in exc.trailing_metadata() or ():
            if key == STATUS_DETAILS and isinstance(value, bytes):
                status = json_format.MessageToDict(status_pb2.Status.FromString(value))
                body = {"message": message, **status, "status": code.name}
                error = error_from_status({"error": body})
                if error is not None:
                    return error
        typed = error_from_typed_message(message)  # how 0.3 servers name the error's type
        if typed is not None:
            return typed
        if code in _BY_CODE:
            return _BY_CODE[code](message)
        if code is grpc.StatusCode.UNAVAILABLE:
            return AgentUnreachable(f"cannot connect to {self.target}: {message}")
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return A2AClientError(f"{rpc} at {self.target} timed out")
        return A2AClientError(f"{rpc} at {self.target} failed: {code.name}: {message}")


def _text_metadata(metadata: Any) -> dict[str, str]:
    """A call's metadata of text values, by (lower-case) key."""
    return {key: value for key, value in metadata or () if isinstance(value, str)}


def channel_target(url: str) -> tuple[str, bool]:
    """The `host:port` a gRPC interface URL names, and whether its scheme asks for TLS."""
    scheme, found, rest = url.partition("://")
    if not found:
        return url.rstrip("/"), False
    return rest.rstrip("/"), scheme.lower() in _TLS_SCHEMES
