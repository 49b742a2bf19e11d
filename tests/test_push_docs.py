"""docs/push.md's receiver runs as written: it accepts the agent's notifications, refuses others."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx

from accord import Agent, create_app
from accord.samples.echo import agent as echo
from agents_for_tests import Gate
from live_server import serve_app
from rpc import connect, send_params, served
from webhooks import LOOPBACK

PUSH_DOC = Path(__file__).resolve().parents[1] / "docs" / "push.md"


def receiver_block() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PUSH_DOC.read_text(), flags=re.DOTALL)
    [block] = [b for b in blocks if "async def hook" in b]
    return block


async def test_the_documented_receiver_verifies_each_notification() -> None:
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
            async with connect(agent_url) as client:
                config = {"pushNotificationConfig": {"url": hook_url, "token": "s3cret"}}
                task = await client.result("message/send", send_params("hi", configuration=config))
                await completed.wait()
            async with httpx.AsyncClient() as http:
                forged = await http.post(hook_url, content=b'{"status": {"state": "completed"}}')

    assert printed == [f"{task['id']} {state}" for state in ("submitted", "working", "completed")]
    assert forged.status_code == 401
