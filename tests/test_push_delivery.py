"""Webhook delivery: a real receiver gets the task on every status change, with credentials."""

from __future__ import annotations

from typing import Any

from accord import Agent
from accord.samples.echo import agent as echo
from agents_for_tests import SAFETY_TIMEOUT, AsksThenCompletes
from rpc import live, send_params
from webhooks import Webhook, receiving


def pushing(base: Agent) -> Agent:
    """The same executor, with a card that declares push notifications."""
    return Agent(base.executor, name=base.name, push_notifications=True)


def push_config(url: str, **extra: Any) -> dict[str, Any]:
    return {"pushNotificationConfig": {"url": url, "token": "tok-1", **extra}}


async def test_each_status_change_reaches_the_webhook_with_its_credentials() -> None:
    hook = Webhook()
    with receiving(hook) as url:
        async with live(pushing(echo)) as client:
            config = push_config(
                url, authentication={"schemes": ["Bearer"], "credentials": "s3cret"}
            )
            task = await client.result("message/send", send_params("hello", configuration=config))
            await hook.reached("completed").wait(SAFETY_TIMEOUT)

    assert task["status"]["state"] == "completed"
    assert hook.states() == ["submitted", "working", "completed"]
    headers, last = hook.calls[-1]
    assert headers["x-a2a-notification-token"] == "tok-1"
    assert headers["authorization"] == "Bearer s3cret"
    assert headers["content-type"] == "application/json"
    assert last["kind"] == "task" and last["id"] == task["id"]
    assert last["artifacts"][0]["parts"][0]["text"] == "hello"


async def test_a_config_set_on_a_waiting_task_gets_its_later_updates() -> None:
    hook = Webhook()
    with receiving(hook) as url:
        async with live(pushing(Agent(AsksThenCompletes(), name="asker"))) as client:
            task = await client.send("hi")
            assert task["status"]["state"] == "input-required"
            await client.result(
                "tasks/pushNotificationConfig/set",
                {"taskId": task["id"], **push_config(url)},
            )
            await client.send("Ada", task_id=task["id"])
            await hook.reached("completed").wait(SAFETY_TIMEOUT)
    # From the follow-up on: the task with the new message, then working, then completed.
    assert hook.states() == ["input-required", "working", "completed"]
    assert [m["role"] for m in hook.calls[0][1]["history"]][-1] == "user"


async def test_a_failing_webhook_is_retried_and_never_harms_the_task() -> None:
    hook = Webhook(failures=1)
    with receiving(hook) as url:
        async with live(pushing(echo)) as client:
            task = await client.result(
                "message/send", send_params("x", configuration=push_config(url))
            )
            await hook.reached("completed").wait(SAFETY_TIMEOUT)
    assert task["status"]["state"] == "completed"
    assert hook.states() == ["submitted", "working", "completed"]  # first try failed
