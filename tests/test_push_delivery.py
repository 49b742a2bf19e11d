"""Webhook delivery: a real receiver gets what the version that registered it expects, with
credentials — 0.x the task on every status change, 1.0 every event as a StreamResponse."""

from __future__ import annotations

from typing import Any

import pytest

from accord import Agent, create_app
from accord.samples.echo import agent as echo
from accord.store.sql import SqlTaskStore
from agents_for_tests import SAFETY_TIMEOUT, AsksThenCompletes, GatedStreamer
from rest import connect_rest
from rpc import Json, connect, live, send_params, served
from rpc_v1_0 import assert_valid_v1, connect_v1, live_v1, send_v1, text_v1
from stores import Backend, sql_backend_fixture  # noqa: F401 - fixtures
from webhooks import LOOPBACK, Webhook, receiving


def pushing(base: Agent) -> Agent:
    """The same executor, with a card that declares push notifications."""
    return Agent(base.executor, name=base.name, push_notifications=True)


def push_config(url: str, **extra: Any) -> dict[str, Any]:
    return {"pushNotificationConfig": {"url": url, "token": "tok-1", **extra}}


async def test_each_status_change_reaches_the_webhook_with_its_credentials() -> None:
    hook = Webhook()
    with receiving(hook) as url:
        async with live(pushing(echo), push_allow=LOOPBACK) as client:
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
        async with live(
            pushing(Agent(AsksThenCompletes(), name="asker")), push_allow=LOOPBACK
        ) as client:
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
        async with live(pushing(echo), push_allow=LOOPBACK) as client:
            task = await client.result(
                "message/send", send_params("x", configuration=push_config(url))
            )
            await hook.reached("completed").wait(SAFETY_TIMEOUT)
    assert task["status"]["state"] == "completed"
    assert hook.states() == ["submitted", "working", "completed"]  # first try failed


# --- A2A 1.0: StreamResponse bodies ----------------------------------------------------------


class StreamResponseWebhook(Webhook):
    """A 1.0 webhook: each body is a StreamResponse (its state: the task's or the update's)."""

    def state_of(self, body: dict[str, Any]) -> str | None:
        carried = body.get("task") or body.get("statusUpdate")
        return carried["status"]["state"] if carried else None

    def bodies(self) -> list[Json]:
        """Each notification, checked to be a 1.0 StreamResponse sent as A2A 1.0 JSON."""
        with self.lock:
            calls = list(self.calls)
        for headers, body in calls:
            assert headers["content-type"] == "application/a2a+json"
            assert_valid_v1("StreamResponse", body)
        return [body for _, body in calls]


def members(bodies: list[Json]) -> list[str]:
    """Which event each StreamResponse holds (exactly one member each)."""
    assert all(len(body) == 1 for body in bodies), bodies
    return [next(iter(body)) for body in bodies]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_1_0_webhooks_get_each_event_and_0_3_ones_the_task_on_status_changes(
    binding: str,
) -> None:
    streamer = GatedStreamer(chunks=2)
    v1_hook, v03_hook = StreamResponseWebhook(), Webhook()
    app = create_app(pushing(Agent(streamer, name="streamer")), push_allow=LOOPBACK)
    with receiving(v1_hook) as v1_url, receiving(v03_hook) as v03_url, served(app) as base_url:
        async with connect_v1(base_url) as v1, connect(base_url) as v03:
            sent = send_v1("go", configuration={"returnImmediately": True})
            task_id = (await v1.result("SendMessage", sent))["task"]["id"]
            await streamer.started.wait()
            auth = {"scheme": "Bearer", "credentials": "s3cret"}
            config = {"url": v1_url, "token": "tok-1", "authentication": auth}
            if binding == "JSONRPC":
                await v1.result("CreateTaskPushNotificationConfig", {"taskId": task_id, **config})
            else:
                async with connect_rest(base_url) as rest:
                    await rest.ok("POST", f"/tasks/{task_id}/pushNotificationConfigs", config)
            webhook_03 = {"taskId": task_id, "pushNotificationConfig": {"url": v03_url}}
            await v03.result("tasks/pushNotificationConfig/set", webhook_03)
            streamer.release_all()
            await v1_hook.reached("TASK_STATE_COMPLETED").wait()
            await v03_hook.reached("completed").wait()

    bodies = v1_hook.bodies()
    assert members(bodies) == ["artifactUpdate", "artifactUpdate", "statusUpdate"]
    assert [text_v1(body["artifactUpdate"]["artifact"]) for body in bodies[:2]] == [
        "chunk 0",
        "chunk 1",
    ]
    assert bodies[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert all(event["taskId"] == task_id for body in bodies for event in body.values())
    headers = v1_hook.calls[0][0]
    assert (headers["authorization"], headers["x-a2a-notification-token"]) == (
        "Bearer s3cret",
        "tok-1",
    )
    # The 0.3 webhook on the same task: the task itself, when its status changed.
    assert v03_hook.states() == ["completed"]
    headers, task = v03_hook.calls[0]
    assert headers["content-type"] == "application/json"
    assert (task["kind"], task["id"]) == ("task", task_id)
    assert [part["text"] for part in task["artifacts"][0]["parts"]] == ["chunk 0", "chunk 1"]


async def test_a_1_0_webhook_sent_with_a_streamed_message_gets_what_the_stream_gets() -> None:
    hook = StreamResponseWebhook()
    with receiving(hook) as url:
        async with live_v1(pushing(echo), push_allow=LOOPBACK) as v1:
            params = send_v1("hello", configuration={"taskPushNotificationConfig": {"url": url}})
            async with v1.stream("SendStreamingMessage", params) as stream:
                streamed = [event.result for event in await stream.rest()]
            await hook.reached("TASK_STATE_COMPLETED").wait()

    bodies = hook.bodies()
    assert bodies == streamed
    assert members(bodies) == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert bodies[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert bodies[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_webhook_keeps_its_version_when_the_server_restarts(sql_backend: Backend) -> None:
    asker = pushing(Agent(AsksThenCompletes(), name="asker"))
    hook = StreamResponseWebhook()
    with receiving(hook) as url:
        async with live_v1(
            asker, store=SqlTaskStore(sql_backend.engine()), push_allow=LOOPBACK
        ) as v1:
            task = (await v1.result("SendMessage", send_v1("hi")))["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            await v1.result("CreateTaskPushNotificationConfig", {"taskId": task["id"], "url": url})
        # Another server on the same database; a 0.3 client sends the answer.
        async with live(
            asker, store=SqlTaskStore(sql_backend.engine()), push_allow=LOOPBACK
        ) as v03:
            await v03.send("Ada", task_id=task["id"])
            await hook.reached("TASK_STATE_COMPLETED").wait()

    bodies = hook.bodies()
    assert members(bodies) == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert text_v1(bodies[2]["artifactUpdate"]["artifact"]) == "Hello, Ada!"
    assert bodies[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
