"""The A2A 1.0 HTTP+JSON routes: the 1.0 methods at the paths of a2a.proto, ProtoJSON both ways."""

from __future__ import annotations

from accord.codecs.rest import RestCodec, RestRoute
from accord.codecs.v1_0 import A2A_JSON, V10Codec
from accord.codecs.versions import ProtocolVersion


def _route(verbs: str, path: str, name: str) -> RestRoute:
    """A route running the 1.0 JSON-RPC method `name`: same request fields, same result JSON."""
    return RestRoute(tuple(verbs.split("|")), path, name, V10Codec.methods[name])


REST_V1_0 = RestCodec(
    version=ProtocolVersion.V1_0,
    prefix="",
    tenants=True,
    media_type=A2A_JSON,
    routes=(
        _route("POST", "/message:send", "SendMessage"),
        _route("POST", "/message:stream", "SendStreamingMessage"),
        _route("GET", "/tasks", "ListTasks"),
        _route("GET", "/tasks/{id}", "GetTask"),
        _route("POST", "/tasks/{id}:cancel", "CancelTask"),
        _route("GET|POST", "/tasks/{id}:subscribe", "SubscribeToTask"),
        _route(
            "POST", "/tasks/{taskId}/pushNotificationConfigs", "CreateTaskPushNotificationConfig"
        ),
        _route("GET", "/tasks/{taskId}/pushNotificationConfigs", "ListTaskPushNotificationConfigs"),
        _route(
            "GET",
            "/tasks/{taskId}/pushNotificationConfigs/{id:str}",
            "GetTaskPushNotificationConfig",
        ),
        _route(
            "DELETE",
            "/tasks/{taskId}/pushNotificationConfigs/{id:str}",
            "DeleteTaskPushNotificationConfig",
        ),
        _route("GET", "/extendedAgentCard", "GetExtendedAgentCard"),
    ),
    hint=" (the A2A 0.3 routes are those under /v1/)",
)
"""A2A 1.0 over HTTP+JSON (spec 1.0, section 11), at `/` and at `/{tenant}/`."""
