"""Serving agents: the ASGI app, the service layer, the JSON-RPC and HTTP+JSON bindings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accord.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from accord.core.call_context import CallContext
    from accord.server.app import create_app
    from accord.server.config import ServerConfig, ServerConfigError
    from accord.server.jsonrpc import JsonRpcBinding
    from accord.server.rest import RestBinding
    from accord.server.service import A2AService

# Each name is imported from its module on first use, so that importing one module of the
# package (`accord.server.config`, for the options of `accord serve`) loads only that module.
_WHERE = {
    "A2AService": "accord.server.service",
    "CallContext": "accord.core.call_context",
    "JsonRpcBinding": "accord.server.jsonrpc",
    "RestBinding": "accord.server.rest",
    "ServerConfig": "accord.server.config",
    "ServerConfigError": "accord.server.config",
    "create_app": "accord.server.app",
}

__all__ = [
    "A2AService",
    "CallContext",
    "JsonRpcBinding",
    "RestBinding",
    "ServerConfig",
    "ServerConfigError",
    "create_app",
]


__getattr__ = lazy_exports(__name__, _WHERE)


def __dir__() -> list[str]:
    return __all__
