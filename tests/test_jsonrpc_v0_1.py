"""A2A 0.1 over JSON-RPC on a live server: `tasks/send` and its kin, sessions, `type`d parts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from accord import Agent, AgentExecutor, RequestContext, TaskUpdater
from accord.agents import EventSink
from accord.codecs.v0_1 import EventRenderer
from accord.codecs.v0_1_json import task_json
from accord.runtime import EventRecord
from accord.samples import echo
from accord.types import (
    Artifact,
    DataPart,
    FilePart,
    FileWithUri,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from agents_for_tests import AsksThenCompletes, Gate, NeverFinishes, Switchboard
from rpc import Json, RpcClient, SseEvent, connect, live, served
from rpc_v1_0 import connect_v1


class PartsBack(AgentExecutor):
    """Answers with an artifact holding the very parts it was sent."""

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater(context, events)
        await updater.add_artifact(context.message.parts, name="echo")
        await updater.complete()


class TwoArtifacts(AgentExecutor):
    """Adds artifact A, waits for `go`, then adds artifact B and one more chunk of A."""

    def __init__(self) -> None:
        self.first_added = Gate("first artifact added")
        self.go = Gate("go on")

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        updater = TaskUpdater(context, events)
        await updater.start_work()
        first = await updater.add_artifact("A1", name="a")
        self.first_added.open()
        await self.go.wait(timeout=None)
        await updater.add_artifact("B", name="b")
        await updater.add_artifact("A2", artifact_id=first, append=True, last_chunk=True)
        await updater.complete()


NEVER = NeverFinishes()
SWITCHBOARD = Switchboard(
    {
        "reply": echo.message_agent.executor,
        "parts": PartsBack(),
        "ask": AsksThenCompletes(),
        "never": NEVER,
    },
    default=echo.agent.executor,
)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    agent = Agent(SWITCHBOARD, name="Switchboard", push_notifications=True)
    with served(agent.app()) as url:
        yield url


@pytest.fixture
async def rpc(base_url: str) -> AsyncIterator[RpcClient]:
    """A client as 0.1 clients are: it sends no A2A-Version (the header came with 0.3)."""
    async with connect(base_url) as client:
        yield client


@pytest.fixture
async def rpc_01(base_url: str) -> AsyncIterator[RpcClient]:
    """A client naming version 0.1, for the methods 0.1 shares with 0.3."""
    async with connect_v1(base_url, "0.1") as client:
        yield client


def text(value: str) -> Json:
    return {"type": "text", "text": value}


def send(task_id: str, *parts: Json, session_id: str | None = None, **extra: Any) -> Json:
    """0.1 TaskSendParams of a user message."""
    params: Json = {"id": task_id, "message": {"role": "user", "parts": list(parts)}, **extra}
    if session_id is not None:
        params["sessionId"] = session_id
    return params


def texts(obj: Json) -> str:
    return "".join(part["text"] for part in obj["parts"] if part["type"] == "text")


LATER_MEMBERS = {"kind", "contextId", "taskId", "messageId", "artifactId"}


def later_members(value: Any) -> set[str]:
    """Members of 0.2 and later found anywhere in `value` (a 0.1 answer has none)."""
    if isinstance(value, dict):
        found = LATER_MEMBERS & set(value)
        return found.union(*(later_members(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(later_members(v) for v in value))
    return set()


def is_v01_task(task: Json) -> bool:
    return "sessionId" in task and not later_members(task)


# --- tasks/send ------------------------------------------------------------------------------


async def test_send_creates_the_task_under_the_id_the_client_chose(rpc: RpcClient) -> None:
    response = await rpc.post(
        {"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": send("t-send", text("hi"))}
    )
    assert response.headers["a2a-version"] == "0.1"
    task = response.json()["result"]
    assert task["id"] == "t-send"
    assert task["status"]["state"] == "completed"
    assert [(a["index"], texts(a)) for a in task["artifacts"]] == [(0, "hi")]
    assert task["history"] == [{"role": "user", "parts": [text("hi")]}]
    assert is_v01_task(task), later_members(task)


async def test_session_id_is_the_context_of_the_task_and_kept_across_tasks(
    rpc: RpcClient, rpc_01: RpcClient
) -> None:
    first = await rpc.result("tasks/send", send("t-s1", text("one")))
    session = first["sessionId"]
    assert session
    second = await rpc.result("tasks/send", send("t-s2", text("two"), session_id=session))
    chosen = await rpc.result("tasks/send", send("t-s3", text("three"), session_id="my-session"))
    assert second["sessionId"] == session
    assert chosen["sessionId"] == "my-session"
    assert (await rpc_01.result("tasks/get", {"id": "t-s2"}))["sessionId"] == session
    assert (await rpc.result("tasks/get", {"id": "t-s2"}))["contextId"] == session


async def test_a_second_send_with_the_same_id_continues_the_task(rpc: RpcClient) -> None:
    asked = await rpc.result("tasks/send", send("t-ask", text("ask me"), session_id="s-ask"))
    assert asked["status"]["state"] == "input-required"
    assert texts(asked["status"]["message"]) == AsksThenCompletes.QUESTION
    assert asked["status"]["message"]["role"] == "agent"

    answered = await rpc.result("tasks/send", send("t-ask", text("Ada"), session_id="s-ask"))
    assert answered["id"] == "t-ask"
    assert answered["status"]["state"] == "completed"
    assert texts(answered["artifacts"][0]) == "Hello, Ada!"
    assert [texts(m) for m in answered["history"] if m["role"] == "user"] == ["ask me", "Ada"]
    assert is_v01_task(answered)


async def test_a_continuation_in_another_session_is_invalid_params(rpc: RpcClient) -> None:
    await rpc.result("tasks/send", send("t-other", text("ask me"), session_id="s-1"))
    error = await rpc.error("tasks/send", send("t-other", text("Ada"), session_id="s-2"))
    assert error["code"] == -32602
    assert "s-2" in error["message"]


async def test_sending_to_a_finished_task_is_32004(rpc: RpcClient) -> None:
    await rpc.result("tasks/send", send("t-done", text("done")))
    error = await rpc.error("tasks/send", send("t-done", text("more")))
    assert error["code"] == -32004


async def test_history_length_trims_the_answer(rpc: RpcClient) -> None:
    task = await rpc.result("tasks/send", send("t-hist", text("hi"), historyLength=0))
    assert "history" not in task


async def test_file_and_data_parts_travel_tagged_by_type(rpc: RpcClient) -> None:
    file = {"type": "file", "file": {"uri": "https://example.com/a.png", "mimeType": "image/png"}}
    data = {"type": "data", "data": {"n": 1}, "metadata": {"schema": "x"}}
    task = await rpc.result("tasks/send", send("t-parts", text("parts"), file, data))
    assert task["artifacts"][0]["parts"] == [text("parts"), file, data]
    assert task["artifacts"][0]["name"] == "echo"


async def test_a_plain_reply_completes_the_task_the_client_named(rpc: RpcClient) -> None:
    task = await rpc.result("tasks/send", send("t-reply", text("reply hi")))
    assert task["id"] == "t-reply"
    assert task["status"]["state"] == "completed"
    assert task["status"]["message"] == {"role": "agent", "parts": [text("reply hi")]}
    assert is_v01_task(task)


async def test_accepted_output_modes_are_checked(rpc: RpcClient) -> None:
    params = send("t-modes", text("hi"), acceptedOutputModes=["image/png"])
    assert (await rpc.error("tasks/send", params))["code"] == -32005


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"message": {"role": "user", "parts": [text("hi")]}}, "id"),
        ({"id": "", "message": {"role": "user", "parts": [text("hi")]}}, "id"),
        ({"id": "t"}, "message"),
        ({"id": "t", "message": "hi"}, "message"),
        ({"id": "t", "message": {"role": "user"}}, "message.parts"),
        (send("t-no-parts"), "message.parts: at least one part is required"),
        (
            {"id": "t", "message": {"role": "user", "parts": [{"text": "hi"}]}},
            "message.parts.0.type",
        ),
        (
            send("t", {"type": "text", "text": "hi", "kind": "data"}, {"type": "video"}),
            "parts.1.type",
        ),
        (send("t", {"type": "text"}), "message.parts.0.text"),
        ({"id": "t", "message": {"role": "robot", "parts": [text("hi")]}}, "message.role"),
        (send("t", text("hi"), historyLength=-1), "historyLength"),
        (send("t", text("hi"), pushNotification={"token": "x"}), "pushNotification.url"),
    ],
)
async def test_bad_send_params_are_32602_naming_the_field(
    rpc: RpcClient, params: Json, field: str
) -> None:
    for method in ("tasks/send", "tasks/sendSubscribe"):
        error = await rpc.error(method, params)
        assert error["code"] == -32602
        assert field in error["message"], error["message"]


async def test_a_part_tagged_with_kind_is_not_a_0_1_part(rpc: RpcClient) -> None:
    params = send("t-kind", {"kind": "text", "text": "hi"})
    error = await rpc.error("tasks/send", params)
    assert error["code"] == -32602
    assert "type" in error["message"]


# --- the methods 0.1 shares with 0.3 --------------------------------------------------------


async def test_tasks_get_is_0_3_without_a_version_and_0_1_when_named(
    rpc: RpcClient, rpc_01: RpcClient, base_url: str
) -> None:
    await rpc.result("tasks/send", send("t-get", text("hi"), session_id="s-get"))
    as_0_3 = await rpc.call("tasks/get", {"id": "t-get"})
    as_0_1 = await rpc_01.call("tasks/get", {"id": "t-get"})
    by_query = await rpc.http.post(
        "/",
        params={"A2A-Version": "0.1"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t-get"}},
    )
    assert as_0_3["result"]["kind"] == "task"
    assert as_0_3["result"]["contextId"] == "s-get"
    assert as_0_1["result"]["sessionId"] == "s-get"
    assert is_v01_task(as_0_1["result"])
    assert by_query.json()["result"] == as_0_1["result"]
    assert by_query.headers["a2a-version"] == "0.1"


async def test_tasks_get_of_0_1_trims_history_and_knows_no_unknown_task(
    rpc: RpcClient, rpc_01: RpcClient
) -> None:
    await rpc.result("tasks/send", send("t-get2", text("hi")))
    task = await rpc_01.result("tasks/get", {"id": "t-get2", "historyLength": 0})
    assert "history" not in task
    error = await rpc_01.error("tasks/get", {"id": "no-such-task"})
    assert error["code"] == -32001


async def test_tasks_cancel_in_0_1(rpc_01: RpcClient) -> None:
    async with rpc_01.stream("tasks/sendSubscribe", send("t-cancel", text("never"))) as stream:
        assert (await stream.next()).result["status"]["state"] == "submitted"
        assert (await stream.next()).result["status"]["state"] == "working"
        canceled = await rpc_01.result("tasks/cancel", {"id": "t-cancel"})
        last = await stream.next()
    assert canceled["id"] == "t-cancel"
    assert canceled["status"]["state"] == "canceled"
    assert is_v01_task(canceled)
    assert last.result["status"]["state"] == "canceled"
    assert last.result["final"] is True
    assert (await rpc_01.error("tasks/cancel", {"id": "t-cancel"}))["code"] == -32002
    assert (await rpc_01.error("tasks/cancel", {"id": "no-such-task"}))["code"] == -32001


# --- streams ---------------------------------------------------------------------------------


def results(events: list[SseEvent]) -> list[Json]:
    return [event.result for event in events]


async def test_send_subscribe_streams_0_1_events(rpc: RpcClient) -> None:
    params = send("t-stream", text("streamed"), session_id="s-stream")
    async with rpc.stream("tasks/sendSubscribe", params, request_id="r1") as stream:
        assert stream.response.headers["a2a-version"] == "0.1"
        events = await stream.rest()
    assert [event.id for event in events] == [1, 2, 3, 4]
    assert all(event.data["id"] == "r1" for event in events)
    submitted, working, artifact, completed = results(events)
    assert submitted == {
        "id": "t-stream",
        "status": {"state": "submitted", "timestamp": submitted["status"]["timestamp"]},
        "final": False,
    }
    assert working["status"]["state"] == "working"
    assert working["final"] is False
    assert artifact["id"] == "t-stream"
    assert artifact["artifact"]["parts"] == [text("streamed")]
    assert artifact["artifact"]["index"] == 0
    assert artifact["final"] is False
    assert completed["status"]["state"] == "completed"
    assert completed["final"] is True
    assert not later_members(results(events))


async def test_artifacts_are_numbered_in_order_and_chunks_keep_their_index() -> None:
    agent = TwoArtifacts()
    params = send("t-two", text("go"))
    with served(Agent(agent, name="Artifacts").app()) as url:
        async with connect(url) as rpc, rpc.stream("tasks/sendSubscribe", params) as stream:
            agent.go.open()
            events = results(await stream.rest())
    chunks = [event["artifact"] for event in events if "artifact" in event]
    assert [(c["index"], c.get("name"), texts(c)) for c in chunks] == [
        (0, "a", "A1"),
        (1, "b", "B"),
        (0, None, "A2"),
    ]
    assert chunks[2]["append"] is True
    assert chunks[2]["lastChunk"] is True


async def test_resubscribe_numbers_artifacts_after_those_the_task_has() -> None:
    agent = TwoArtifacts()
    with served(Agent(agent, name="Artifacts").app()) as url:
        async with (
            connect(url) as rpc,
            connect_v1(url, "0.1") as rpc_01,
            rpc.stream("tasks/sendSubscribe", send("t-re", text("go"))) as first,
        ):
            while "artifact" not in (await first.next()).result:
                pass
            async with rpc_01.stream("tasks/resubscribe", {"id": "t-re"}) as second:
                snapshot = (await second.next()).result
                agent.go.open()
                events = results(await second.rest())
    assert snapshot == {
        "id": "t-re",
        "status": {"state": "working", "timestamp": snapshot["status"]["timestamp"]},
        "final": False,
    }
    chunks = [(e["artifact"]["index"], texts(e["artifact"])) for e in events if "artifact" in e]
    assert chunks == [(1, "B"), (0, "A2")]
    assert events[-1]["status"]["state"] == "completed"
    assert events[-1]["final"] is True


async def test_a_stream_resumed_after_an_event_numbers_what_it_missed_by_place() -> None:
    agent = TwoArtifacts()
    with served(Agent(agent, name="Artifacts").app()) as url:
        async with connect(url) as rpc, connect_v1(url, "0.1") as rpc_01:
            async with rpc.stream("tasks/sendSubscribe", send("t-last", text("go"))) as first:
                seen = [await first.next() for _ in range(3)]
                agent.go.open()
                await first.rest()
            assert "artifact" in seen[-1].result
            after = {"Last-Event-ID": str(seen[-1].id)}
            async with rpc_01.stream("tasks/resubscribe", {"id": "t-last"}, headers=after) as again:
                missed = await again.rest()
    assert [event.id for event in missed] == [4, 5, 6]
    chunks = [(e["artifact"]["index"], texts(e["artifact"])) for e in results(missed)[:2]]
    assert chunks == [(1, "B"), (0, "A2")]
    assert results(missed)[-1]["final"] is True


async def test_resubscribe_without_a_version_is_0_3(rpc: RpcClient) -> None:
    async with rpc.stream("tasks/sendSubscribe", send("t-re3", text("never"))) as stream:
        await stream.next()
        async with rpc.stream("tasks/resubscribe", {"id": "t-re3"}) as again:
            assert (await again.next()).result["kind"] == "task"
        await rpc.result("tasks/cancel", {"id": "t-re3"})
        assert (await stream.rest())[-1].result["status"]["state"] == "canceled"


async def test_a_plain_reply_streams_as_the_final_status(rpc: RpcClient) -> None:
    async with rpc.stream("tasks/sendSubscribe", send("t-sreply", text("reply yo"))) as stream:
        events = results(await stream.rest())
    assert len(events) == 1
    (event,) = events
    assert event["id"] == "t-sreply"
    assert event["status"]["state"] == "completed"
    assert event["status"]["message"] == {"role": "agent", "parts": [text("reply yo")]}
    assert event["final"] is True


async def test_send_subscribe_to_an_agent_without_streaming_is_32004() -> None:
    agent = Agent(echo.agent.executor, name="No streams", streaming=False)
    async with (
        live(agent) as rpc,
        rpc.http.stream(
            "POST",
            "/",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tasks/sendSubscribe",
                "params": send("t", text("x")),
            },
        ) as response,
    ):
        await response.aread()
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"]["code"] == -32004


# --- push notification config ----------------------------------------------------------------


async def test_push_config_set_and_get(rpc: RpcClient) -> None:
    await rpc.result("tasks/send", send("t-push", text("hi")))
    config = {"url": "https://client.example.com/hook", "token": "secret"}
    set_result = await rpc.result(
        "tasks/pushNotification/set", {"id": "t-push", "pushNotificationConfig": config}
    )
    assert set_result == {"id": "t-push", "pushNotificationConfig": config}
    assert await rpc.result("tasks/pushNotification/get", {"id": "t-push"}) == set_result

    replaced = {
        "url": "https://client.example.com/other",
        "authentication": {"schemes": ["Bearer"], "credentials": "c"},
    }
    await rpc.result(
        "tasks/pushNotification/set", {"id": "t-push", "pushNotificationConfig": replaced}
    )
    got = await rpc.result("tasks/pushNotification/get", {"id": "t-push"})
    assert got == {"id": "t-push", "pushNotificationConfig": replaced}


async def test_push_config_given_with_the_message_is_the_tasks(rpc: RpcClient) -> None:
    config = {"url": "https://client.example.com/hook"}
    await rpc.result("tasks/send", send("t-inline", text("hi"), pushNotification=config))
    got = await rpc.result("tasks/pushNotification/get", {"id": "t-inline"})
    assert got == {"id": "t-inline", "pushNotificationConfig": config}


async def test_push_config_errors(rpc: RpcClient) -> None:
    config = {"url": "https://client.example.com/hook"}
    unknown = {"id": "no-such-task", "pushNotificationConfig": config}
    assert (await rpc.error("tasks/pushNotification/set", unknown))["code"] == -32001
    await rpc.result("tasks/send", send("t-nopush", text("hi")))
    assert (await rpc.error("tasks/pushNotification/get", {"id": "t-nopush"}))["code"] == -32001
    missing_url = {"id": "t-nopush", "pushNotificationConfig": {}}
    error = await rpc.error("tasks/pushNotification/set", missing_url)
    assert error["code"] == -32602
    assert "pushNotificationConfig.url" in error["message"]


async def test_push_config_without_the_capability_is_32003() -> None:
    async with live(Agent(echo.agent.executor, name="No push")) as rpc:
        await rpc.result("tasks/send", send("t", text("hi")))
        config = {"id": "t", "pushNotificationConfig": {"url": "https://x.example.com"}}
        assert (await rpc.error("tasks/pushNotification/set", config))["code"] == -32003
        assert (await rpc.error("tasks/pushNotification/get", {"id": "t"}))["code"] == -32003
        inline = send("t2", text("hi"), pushNotification={"url": "https://x.example.com"})
        assert (await rpc.error("tasks/send", inline))["code"] == -32003


# --- versions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "method", "params"),
    [
        ("0.3", "tasks/send", send("t", text("hi"))),
        ("1.0", "tasks/sendSubscribe", send("t", text("hi"))),
        ("0.2.5", "tasks/pushNotification/get", {"id": "t"}),
        ("0.1", "message/send", {"message": {}}),
        ("0.1", "SendMessage", {"message": {}}),
        ("1.0", "tasks/get", {"id": "t"}),
    ],
)
async def test_a_method_of_another_version_than_the_named_one_is_32009(
    rpc: RpcClient, header: str, method: str, params: Json
) -> None:
    response = await rpc.post(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={"Content-Type": "application/json", "A2A-Version": header},
    )
    error = response.json()["error"]
    assert error["code"] == -32009
    assert header in error["message"]


# --- rendering, without a server -------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "shown"),
    [
        (TaskState.REJECTED, "failed"),
        (TaskState.AUTH_REQUIRED, "input-required"),
        (TaskState.CANCELED, "canceled"),
        (TaskState.UNKNOWN, "unknown"),
    ],
)
def test_states_0_1_lacks_are_shown_as_the_nearest_it_has(state: TaskState, shown: str) -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=state))
    assert task_json(task.to_wire())["status"] == {"state": shown}
    record = EventRecord.of(
        "t", 2, TaskStatusUpdateEvent(task_id="t", context_id="c", status=task.status), final=True
    )
    assert EventRenderer().render(record)["status"] == {"state": shown}


def test_a_file_part_keeps_its_content() -> None:
    part = FilePart(file=FileWithUri(uri="https://example.com/f", name="f.txt"))
    artifact = Artifact(artifact_id="x", parts=[part, DataPart(data={})], description="d")
    event = TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=artifact)
    rendered = EventRenderer().render(EventRecord.of("t", 3, event, final=False))
    assert rendered == {
        "id": "t",
        "artifact": {
            "description": "d",
            "parts": [
                {"type": "file", "file": {"name": "f.txt", "uri": "https://example.com/f"}},
                {"type": "data", "data": {}},
            ],
            "index": 0,
        },
        "final": False,
    }


def test_a_task_snapshot_seeds_the_artifact_numbers() -> None:
    artifacts = [Artifact(artifact_id=i, parts=[TextPart(text=i)]) for i in ("a", "b")]
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    renderer = EventRenderer()
    renderer.render(
        EventRecord.of("t", 1, task.model_copy(update={"artifacts": artifacts}), final=False)
    )
    for artifact_id, index in [("b", 1), ("c", 2), ("a", 0)]:
        artifact = Artifact(artifact_id=artifact_id, parts=[TextPart(text="more")])
        event = TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=artifact)
        rendered = renderer.render(EventRecord.of("t", 2, event, final=False))
        assert rendered["artifact"]["index"] == index
