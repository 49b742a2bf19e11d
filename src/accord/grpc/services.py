"""The A2A 1.0 and 0.3 gRPC services: each RPC's codec method and its request's resource names."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import FileDescriptor, MethodDescriptor
from google.protobuf.message import Message as ProtoMessage

from accord.codecs import ProtocolVersion, V10Codec
from accord.codecs.base import Method, field_error
from accord.codecs.error_names import typed_message
from accord.codecs.rest_v0_3 import REST_V0_3
from accord.errors import A2AError
from accord.grpc.generated.v0_3 import a2a_pb2 as v0_3_pb2
from accord.grpc.generated.v0_3 import a2a_pb2_grpc as v0_3_grpc
from accord.grpc.generated.v1_0 import a2a_pb2 as v1_0_pb2
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as v1_0_grpc

_TASKS, _CONFIGS = "tasks", "pushNotificationConfigs"


@dataclass(frozen=True, slots=True)
class ResourceName:
    """A 0.3 request naming its resource (`tasks/{id}`, `tasks/{id}/pushNotificationConfigs/
    {configId}`) in `key` where the HTTP+JSON route has the path fields `fields`; `body`, if
    set, is the request field holding what the route's body holds (the proto's `body:`)."""

    key: str
    fields: tuple[str, ...]
    body: str | None = None

    @property
    def _pattern(self) -> list[str]:
        return [_TASKS, "{}", _CONFIGS, "{}"][: 2 * len(self.fields)]

    def route_fields(self, request: dict[str, Any]) -> dict[str, Any]:
        """The route's fields of a request's ProtoJSON (the server's direction)."""
        rest = {k: v for k, v in request.items() if k != self.key}
        parts = str(request.get(self.key, "")).split("/")
        values = parts[1::2]
        pattern = self._pattern
        if len(parts) != len(pattern) or parts[::2] != pattern[::2] or not all(values):
            raise field_error(self.key, f"must be {'/'.join(pattern).format(*self.fields)}")
        return {**rest, **dict(zip(self.fields, values, strict=True))}

    def request_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """The request's ProtoJSON of the route's fields (the client's direction)."""
        rest = {k: v for k, v in fields.items() if k not in self.fields}
        name = "/".join(self._pattern).format(*(str(fields[f]) for f in self.fields))
        return {self.key: name, **({self.body: rest} if self.body else rest)}


@dataclass(frozen=True, slots=True)
class GrpcService:
    """One version's `A2AService`: its proto file and generated stub, and for each RPC the
    codec `Method` that decodes its request's ProtoJSON and encodes its result (`names` say
    how a 0.3 request's resource name holds that method's fields). `status_message` is the
    message of the status that ends a failed call."""

    version: ProtocolVersion
    file: FileDescriptor
    stub: Callable[[Any], Any]
    methods: Mapping[str, Method]
    names: Mapping[str, ResourceName]
    hint: str
    status_message: Callable[[A2AError], str] = lambda error: error.message

    @property
    def name(self) -> str:
        return str(self.file.services_by_name["A2AService"].full_name)

    def rpc(self, name: str) -> MethodDescriptor:
        """The descriptor of the RPC called `name`."""
        return self.file.services_by_name["A2AService"].methods_by_name[name]

    def route_fields(self, rpc: str, request: dict[str, Any]) -> dict[str, Any]:
        """The fields the codec method of `rpc` reads, from its request's ProtoJSON."""
        name = self.names.get(rpc)
        return name.route_fields(request) if name else request

    def request(self, rpc: str, fields: dict[str, Any]) -> ProtoMessage:
        """The request message of `rpc` holding `fields` (the client codec's, for its method);
        members the request does not have are left out."""
        name = self.names.get(rpc)
        request = message_factory.GetMessageClass(self.rpc(rpc).input_type)()
        proto = name.request_fields(fields) if name else fields
        parsed: ProtoMessage = json_format.ParseDict(proto, request, ignore_unknown_fields=True)
        return parsed


V1_0 = GrpcService(
    version=ProtocolVersion.V1_0,
    file=v1_0_pb2.DESCRIPTOR,
    stub=v1_0_grpc.A2AServiceStub,
    methods=V10Codec.methods,
    names={},
    hint=" (the A2A 0.3 service is a2a.v1.A2AService)",
)
"""A2A 1.0 over gRPC: `lf.a2a.v1.A2AService`, the requests and results of 1.0 JSON-RPC."""

V0_3 = GrpcService(
    version=ProtocolVersion.V0_3,
    file=v0_3_pb2.DESCRIPTOR,
    stub=v0_3_grpc.A2AServiceStub,
    methods={route.name: route.method for route in REST_V0_3.routes},
    names={
        "GetTask": ResourceName("name", ("id",)),
        "CancelTask": ResourceName("name", ("id",)),
        "TaskSubscription": ResourceName("name", ("id",)),
        "CreateTaskPushNotificationConfig": ResourceName("parent", ("id",), body="config"),
        "GetTaskPushNotificationConfig": ResourceName("name", ("id", "configId")),
        "ListTaskPushNotificationConfig": ResourceName("parent", ("id",)),
        "DeleteTaskPushNotificationConfig": ResourceName("name", ("id", "configId")),
    },
    hint=" (the A2A 1.0 service is lf.a2a.v1.A2AService)",
    status_message=typed_message,  # what 0.3 clients read the error's type from
)
"""A2A 0.3 over gRPC: `a2a.v1.A2AService`, the 0.3 proto's shapes of its HTTP+JSON routes."""

GRPC_SERVICES = (V1_0, V0_3)


def grpc_service(version: ProtocolVersion) -> GrpcService:
    """The service of `version`."""
    return next(spec for spec in GRPC_SERVICES if spec.version is version)
