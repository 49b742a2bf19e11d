"""A2A 1.0 over raw JSON-RPC for the tests: connections that send A2A-Version, wire builders,
and checks against the generated 1.0 JSON schema (skipped when the spec checkout is absent)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from typing import Any

import httpx
from jsonschema import Draft202012Validator
from starlette.applications import Starlette

from accord import Agent, create_app
from accord.types import new_id
from agents_for_tests import SAFETY_TIMEOUT
from rpc import Json, RpcClient, served
from spec_files import SPEC_DIR, read_spec_file

SCHEMA_V1_0_PATH = SPEC_DIR / "a2a-v1.0.1.generated.refs-fixed.json"


@asynccontextmanager
async def connect_v1(base_url: str, version: str = "1.0") -> AsyncIterator[RpcClient]:
    """A JSON-RPC client of `base_url` that sends `A2A-Version: version` with every request."""
    headers = {"A2A-Version": version}
    async with httpx.AsyncClient(
        base_url=base_url, timeout=SAFETY_TIMEOUT, headers=headers
    ) as http:
        yield RpcClient(http, base_url)


@asynccontextmanager
async def live_v1(target: Agent | Starlette, **options: Any) -> AsyncIterator[RpcClient]:
    """Serve an agent (with `create_app` options) or an app; talk A2A 1.0 JSON-RPC to it."""
    app = create_app(target, **options) if isinstance(target, Agent) else target
    with served(app) as base_url:
        async with connect_v1(base_url) as client:
            yield client


def message_v1(
    text: str, *, task_id: str | None = None, context_id: str | None = None, **extra: Any
) -> Json:
    """A 1.0 user message holding one text part."""
    message: Json = {
        "messageId": new_id(),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        **extra,
    }
    if task_id is not None:
        message["taskId"] = task_id
    if context_id is not None:
        message["contextId"] = context_id
    return message


def send_v1(text: str, *, configuration: Json | None = None, **message: Any) -> Json:
    """1.0 SendMessageRequest params carrying one user text message."""
    params: Json = {"message": message_v1(text, **message)}
    if configuration is not None:
        params["configuration"] = configuration
    return params


def text_v1(obj: Json) -> str:
    """The text parts of a 1.0 message or artifact, joined by newlines."""
    return "\n".join(part["text"] for part in obj["parts"] if "text" in part)


def error_info(error: Json) -> Json:
    """The one google.rpc.ErrorInfo of a 1.0 error object."""
    infos = [d for d in error["data"] if d["@type"].endswith("google.rpc.ErrorInfo")]
    assert len(infos) == 1, error
    info: Json = infos[0]
    assert info["domain"] == "a2a-protocol.org"
    return info


@cache
def _definitions() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(read_spec_file(SCHEMA_V1_0_PATH))
    return dict(schema["$defs"])


@cache
def _validator(definition: str) -> Draft202012Validator:
    definitions = _definitions()
    assert definition in definitions, f"the 1.0 schema has no {definition}"
    root = {"$ref": f"#/$defs/{definition}", "$defs": definitions}
    return Draft202012Validator(root, format_checker=Draft202012Validator.FORMAT_CHECKER)


def schema_errors_v1(definition: str, instance: Any) -> list[str]:
    """How `instance` breaks `definition` of the 1.0 schema (empty: valid); skips without it."""
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message[:300]}"
        for error in _validator(definition).iter_errors(instance)
    ]


def assert_valid_v1(definition: str, instance: Any) -> None:
    errors = schema_errors_v1(definition, instance)
    assert not errors, f"{definition} does not validate: {errors}"
