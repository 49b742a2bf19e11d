"""Serving agents: the ASGI app, the service layer and the JSON-RPC binding."""

from accord.server.app import create_app
from accord.server.call_context import CallContext
from accord.server.jsonrpc import JsonRpcBinding
from accord.server.service import A2AService

__all__ = ["A2AService", "CallContext", "JsonRpcBinding", "create_app"]
