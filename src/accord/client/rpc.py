"""JSON-RPC envelopes for the client: request bytes out, typed results or A2A errors in."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from accord.client.failures import describe_validation_error
from accord.errors import A2AClientError, A2AError
from accord.types import A2AModel, JSONRPCError, JsonRpcId, JSONRPCRequest

T = TypeVar("T")


def encode_request(request_id: int, method: str, params: A2AModel | None) -> bytes:
    """The JSON body of a call of `method`."""
    wire_params = params.to_wire() if params is not None else None
    return JSONRPCRequest(id=request_id, method=method, params=wire_params).to_json()


def is_response(document: Any) -> bool:
    """Whether `document` looks like a JSON-RPC response (has a result or an error)."""
    return isinstance(document, dict) and ("result" in document or "error" in document)


def decode_response(document: Any, result: TypeAdapter[T], request_id: JsonRpcId) -> T:
    """The typed result of a JSON-RPC response; raises the A2AError it carries instead."""
    if not is_response(document):
        raise A2AClientError("the answer is not a JSON-RPC response")
    if "error" in document:
        raise _error(document["error"])
    if document.get("id") != request_id:
        raise A2AClientError(
            f"the answer is for request id {document.get('id')!r}, not {request_id!r}"
        )
    try:
        return result.validate_python(document["result"])
    except ValidationError as exc:
        reason = describe_validation_error(exc)
        raise A2AClientError(f"the agent sent an invalid result: {reason}") from None


def _error(error: Any) -> Exception:
    try:
        return A2AError.from_error_object(JSONRPCError.model_validate(error))
    except ValidationError:
        return A2AClientError(f"malformed JSON-RPC error object: {json.dumps(error)[:200]}")
