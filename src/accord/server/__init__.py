"""Serving agents: the ASGI app, the service layer, the JSON-RPC and HTTP+JSON bindings."""

from accord.core.call_context import CallContext
from accord.server.app import create_app
from accord.server.config import ServerConfig, ServerConfigError
from accord.server.jsonrpc import JsonRpcBinding
from accord.server.rest import RestBinding
from accord.server.service import A2AService

__all__ = [
    "A2AService",
    "CallContext",
    "JsonRpcBinding",
    "RestBinding",
    "ServerConfig",
    "ServerConfigError",
    "create_app",
]
