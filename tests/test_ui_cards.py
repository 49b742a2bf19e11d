"""The UI's JSON API without a browser: the secrets a message carries, bad input in words."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accord import create_app
from accord.samples import echo
from accord.ui import create_ui_app
from accord.ui.requests import BadRequest, secrets_sent
from live_server import serve_app
from ui_pages import ui_client

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(
    body=st.dictionaries(st.sampled_from(["text", "secret", "secretFields"]), JSON_VALUES),
    data=st.one_of(st.none(), st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=3)),
)
def test_the_secrets_of_any_message_are_read_or_refused_in_words(
    body: dict[str, Any], data: dict[str, Any] | None
) -> None:
    try:
        secrets = secrets_sent(body, data)
    except BadRequest as exc:
        assert str(exc).startswith("`")
        return
    assert all(isinstance(secret, str) and secret.strip() for secret in secrets)
    for name in body.get("secretFields") or []:
        value = (data or {}).get(name)
        assert not (isinstance(value, str) and value.strip()) or value in secrets


@pytest.fixture
def ui() -> Iterator[str]:
    with serve_app(create_ui_app()) as url:
        yield url


@pytest.mark.parametrize(
    ("path", "body", "reason"),
    [
        ("/api/send", b"{", "the request body must be JSON"),
        ("/api/send", b"[]", "the request body must be a JSON object"),
        ("/api/send", b'{"text": "hi"}', "say which agent to talk to"),
        ("/api/send", b'{"agent": "http://x", "text": ""}', "the message is empty"),
        ("/api/send", b'{"agent": "http://x", "text": 5}', "`text` must be text"),
        ("/api/send", b'{"agent": "http://x", "data": [1]}', "`data` must be a JSON object"),
        (
            "/api/send",
            b'{"agent": "http://x", "data": {"pin": "1"}, "secretFields": "pin"}',
            "`secretFields` must be a list of names",
        ),
        ("/api/send", b'{"agent": "http://x", "text": "a", "secretFields": [1]}', "`secretFields`"),
        ("/api/agents", b'{"url": ""}', "give the agent's URL"),
        ("/api/agents", b'{"url": "ftp://x"}', "must start with http:// or https://"),
        ("/api/inspect", b'{"url": "http://127.0.0.1:1"}', "nothing answers at 127.0.0.1:1"),
    ],
)
def test_bad_requests_get_400_with_the_reason(ui: str, path: str, body: bytes, reason: str) -> None:
    with ui_client(ui) as api:
        response = api.post(path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert reason in response.json()["error"]


def test_a_turn_with_an_unreachable_agent_ends_with_the_reason(ui: str) -> None:
    api = ui_client(ui)
    sent = api.post("/api/send", json={"agent": "http://127.0.0.1:1", "text": "hi"})
    assert sent.status_code == 202
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        [conversation] = api.get("/api/state").json()["conversations"]
        if conversation["items"][-1]["done"]:
            break
        time.sleep(0.05)
    assert conversation["items"][-1]["error"].startswith("cannot connect to http://127.0.0.1:1/")


def test_the_events_stream_starts_with_a_snapshot(ui: str) -> None:
    api = ui_client(ui)
    with serve_app(create_app(echo.agent)) as agent:
        added = api.post("/api/agents", json={"url": agent})
        assert added.status_code == 201
        assert added.json()["agent"]["valid"] is True
        session = api.headers["X-Accord-Session"]
        with api.stream("GET", "/ui/events", params={"session": session}) as events:
            lines = events.iter_lines()
            assert next(lines) == "event: snapshot"
            snapshot = json.loads(next(lines)[len("data: ") :])
        assert [a["name"] for a in snapshot["agents"]] == ["Echo"]
        assert api.delete("/api/agents", params={"url": agent}).status_code == 204
        assert api.get("/api/state").json()["agents"] == []
