"""`accord serve --metrics --audit-log FILE --log-format json`, tracing by OTEL_* variables."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from accord import Client
from accord.cli.errors import BadArgument
from accord.cli.observability_options import ObservabilitySettings
from accord.cli.serve import ServeSettings, serve
from accord.types import Task, TaskState
from agents_for_tests import SAFETY_TIMEOUT
from served_process import accord_serve


@pytest.mark.processes
async def test_serve_with_metrics_audit_log_json_logs_and_tracing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    audit = tmp_path / "audit.jsonl"
    args = ["observed_agents:failing", "--store", "memory", "--metrics", "--audit-log", str(audit)]
    with accord_serve(*args, "--log-format", "json", cwd=tmp_path) as server:
        async with Client(server.url, transport="JSONRPC", timeout=SAFETY_TIMEOUT) as client:
            task = await client.send("hi")
        assert isinstance(task, Task) and task.status.state is TaskState.FAILED
        async with httpx.AsyncClient(timeout=SAFETY_TIMEOUT) as http:
            scraped = (await http.get(server.url + "/metrics")).text
        server.stop()
    said = server.output
    assert "accord: tracing, exported as OTEL_TRACES_EXPORTER says (console)" in said
    assert "accord: metrics at /metrics" in said
    samples = {
        (s.name, s.labels.get("outcome")): s.value
        for family in text_string_to_metric_families(scraped)
        for s in family.samples
    }
    assert samples["a2a_server_requests_total", "ok"] == 1
    assert samples["a2a_agent_runs_total", "failed"] == 1
    (line,) = [json.loads(text) for text in audit.read_text().splitlines()]
    assert (line["operation"], line["decision"], line["task_id"]) == (
        "send_message",
        "allowed",
        task.id,
    )
    logged = [json.loads(text) for text in said.splitlines() if text.startswith("{")]
    (failure,) = [entry for entry in logged if entry["level"] == "ERROR"]
    assert "the disk is full" in failure["exception"]
    assert len(failure["trace_id"]) == 32 and len(failure["span_id"]) == 16
    assert failure["trace_id"] == line["trace_id"]  # the audit line's trace is the run's
    access = [entry for entry in logged if entry["logger"] == "uvicorn.access"]
    (posted,) = [entry for entry in access if entry["method"] == "POST"]
    assert (posted["path"], posted["status"]) == ("/", 200)
    assert posted["trace_id"] == line["trace_id"]  # the operation's span, which had ended


def test_metrics_and_the_audit_log_are_an_agents_only() -> None:
    async def plain_app(scope: object, receive: object, send: object) -> None: ...

    settings = ServeSettings(
        "127.0.0.1", 0, observability=ObservabilitySettings(metrics=True, audit_log="-")
    )
    with pytest.raises(BadArgument, match=r"--metrics and --audit-log serve an accord\.Agent"):
        serve(plain_app, settings)
    with pytest.raises(BadArgument, match="--log-format must be text or json"):
        ObservabilitySettings(log_format="xml")
