"""A Task-mode 0.3 `message/send` answers the JSON its store was given of the ended task: the
same bytes as the task encoded afresh, and a hook's change to the task still shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

import accord
import accord.store
from accord.samples import echo
from accord.server.pipeline import Call, Proceed
from accord.types import Task

_ENVELOPE = b'{"jsonrpc":"2.0","id":1,"result":'


async def _call(client: httpx.AsyncClient, method: str, params: dict[str, Any]) -> bytes:
    """The raw JSON of the result of one JSON-RPC call."""
    call = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = await client.post("/", json=call)
    assert response.content.startswith(_ENVELOPE), response.content
    return response.content[len(_ENVELOPE) : -1]


def _send_params() -> dict[str, Any]:
    message = {"kind": "message", "role": "user", "messageId": "m-1"}
    return {"message": {**message, "parts": [{"kind": "text", "text": "hello"}]}}


async def _sent_and_read(app: Any) -> tuple[bytes, bytes]:
    """The result of a send, and of `tasks/get` of the task it made."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            sent = await _call(client, "message/send", _send_params())
            task_id = json.loads(sent)["id"]
            read = await _call(client, "tasks/get", {"id": task_id})
    return sent, read


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_the_reply_is_the_task_as_stored_byte_for_byte(store: str, tmp_path: Path) -> None:
    url = "memory" if store == "memory" else f"sqlite:///{tmp_path}/tasks.db"
    app = accord.create_app(echo.agent, store=accord.store.open_store(url))
    sent, read = await _sent_and_read(app)
    assert json.loads(sent)["status"]["state"] == "completed"
    assert sent == read == Task.model_validate_json(sent).to_json()


async def test_a_hook_that_changes_the_task_in_place_is_answered_with_its_change() -> None:
    async def tagged(call: Call, proceed: Proceed) -> Any:
        result = await proceed()
        if isinstance(result, Task):
            result.metadata = {"tagged": True}
        return result

    app = accord.create_app(echo.agent, hooks=[tagged])
    sent, _ = await _sent_and_read(app)
    assert json.loads(sent)["metadata"] == {"tagged": True}
