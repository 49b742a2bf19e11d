"""The audit log: a JSON line for each allowed and refused call, none holding a credential or
a message's text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from accord import Agent, Client, create_app
from accord.auth import ApiKey, Security
from accord.errors import TaskNotFound, Unauthenticated
from accord.observability.audit import AuditLog, audited_ids
from accord.observability.trace_ids import trace_id_of
from accord.samples import echo
from accord.types import Task
from rpc import served

SECRET = "key-of-alice-3f9c"
WRONG = "guessed-key-77aa"
TEXT = "the launch code is 0000"
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_allowed_and_refused_calls_are_audited_without_secrets(
    binding: str, tmp_path: Path
) -> None:
    agent = Agent(echo.agent.executor, name="Audited", security=Security(ApiKey({SECRET: "alice"})))
    app = create_app(agent, grpc_port=0)
    log = tmp_path / "audit.jsonl"
    audit = AuditLog(log)
    audit.install(app)
    headers = {"X-API-Key": SECRET, "traceparent": TRACEPARENT}
    with served(app) as url:
        async with Client(url, transport=binding, version="1.0", headers=headers) as client:
            task = await client.send(TEXT)
            assert isinstance(task, Task)
            with pytest.raises(TaskNotFound):
                await client.get_task("no-such-task")
        async with Client(url, transport=binding, version="1.0", headers={"X-API-Key": WRONG}) as c:
            with pytest.raises(Unauthenticated):
                await c.send(TEXT)
    audit.close()
    written = log.read_text()
    lines = [json.loads(line) for line in written.splitlines()]
    sent, missing, refused = lines
    assert sent["agent"] == "Audited" and sent["binding"] == binding
    assert (sent["operation"], sent["decision"]) == ("send_message", "allowed")
    assert (sent["principal"], sent["scheme"]) == ("alice", "apiKey")
    assert (sent["task_id"], sent["context_id"]) == (task.id, task.context_id)
    assert sent["trace_id"] == "0af7651916cd43dd8448eb211c80319c"
    assert sent["peer"].startswith("127.0.0.1") or "127.0.0.1" in sent["peer"]
    assert (missing["operation"], missing["decision"]) == ("get_task", "allowed")
    assert (missing["task_id"], missing["error"]) == ("no-such-task", "TaskNotFound")
    assert (refused["decision"], refused["reason"]) == ("refused", "Unauthenticated")
    assert refused["principal"] is None and refused["why"]
    for secret in (SECRET, WRONG, "launch code"):
        assert secret not in written


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=300),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=20), inner, max_size=4)
    ),
    max_leaves=20,
)
id_keys = st.sampled_from(["id", "taskId", "contextId", "message", "pushNotificationConfigId"])


@given(
    params=st.dictionaries(id_keys | st.text(max_size=10), json_values, max_size=6),
    traceparent=st.text(max_size=80),
)
@example(params={"pushNotificationConfigId": ""}, traceparent="")  # an empty id is no id
def test_any_request_is_audited_with_bounded_ids_or_none(
    params: dict[str, object], traceparent: str
) -> None:
    found = audited_ids(params)
    assert set(found) <= {"task_id", "context_id", "config_id"}
    assert all(isinstance(value, str) and 0 < len(value) <= 200 for value in found.values())
    trace_id = trace_id_of({"traceparent": traceparent})
    assert trace_id is None or re.fullmatch(r"[0-9a-f]{32}", trace_id)
