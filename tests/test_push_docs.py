"""docs/push.md's receiver runs as written: it accepts the agent's notifications, refuses others."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from accord import Agent, Client, create_app
from accord.push import Notification, NotificationRefused
from accord.samples.echo import agent as echo
from accord.types import PushNotificationConfig
from agents_for_tests import Gate
from live_server import serve_app
from rpc import served
from webhooks import LOOPBACK

PUSH_DOC = Path(__file__).resolve().parents[1] / "docs" / "push.md"


def receiver_block() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PUSH_DOC.read_text(), flags=re.DOTALL)
    [block] = [b for b in blocks if "async def hook" in b]
    return block


@pytest.mark.parametrize("version", ["0.3", "1.0"])
async def test_the_documented_receiver_verifies_each_notification(version: str) -> None:
    """Registered over 0.3 the webhook gets task snapshots, over 1.0 StreamResponses (as with
    `accord send --push-url`): the receiver reads both."""
    printed: list[str] = []
    completed = Gate("completed printed")

    def capture(*args: Any) -> None:
        printed.append(" ".join(map(str, args)))
        if printed[-1].endswith("completed"):
            completed.open()

    agent = Agent(echo.executor, name="pusher", push_notifications=True)
    with served(create_app(agent, push_allow=LOOPBACK)) as agent_url:
        source = receiver_block().replace("http://127.0.0.1:8000", agent_url)
        namespace: dict[str, Any] = {"print": capture}
        exec(compile(source, "docs/push.md", "exec"), namespace)
        with serve_app(namespace["app"]) as receiver_url:
            hook_url = receiver_url + "/hook"
            namespace["MY_URL"] = hook_url  # the audience is the URL the agent was given
            async with Client(agent_url, version=version) as client:
                push = PushNotificationConfig(url=hook_url, token="s3cret")
                task = await client.send("hi", push=push)
                await completed.wait()
            async with httpx.AsyncClient() as http:
                forged = await http.post(hook_url, content=b'{"status": {"state": "completed"}}')

    assert printed == [f"{task.id} {state}" for state in ("submitted", "working", "completed")]
    assert forged.status_code == 401


def test_a_body_that_is_no_event_is_refused_by_name() -> None:
    for body in (b"[1]", b'{"statusUpdate": {"taskId": 3}}', b'{"id": "t"}'):
        with pytest.raises(NotificationRefused, match="not an A2A event"):
            Notification("t", body, {}).event()
