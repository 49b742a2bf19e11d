"""A2A over gRPC on a real grpc.aio server: both services, streams, metadata, status codes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from accord import Agent, create_app
from accord.extensions.timing import TIMING_URI
from accord.grpc.generated.v0_3 import a2a_pb2 as pb3
from accord.grpc.generated.v0_3 import a2a_pb2_grpc as rpc3
from accord.grpc.generated.v1_0 import a2a_pb2 as pb
from accord.grpc.generated.v1_0 import a2a_pb2_grpc as rpc
from accord.samples import echo
from accord.types import AgentCapabilities, AgentCard, AgentSkill, TransportProtocol
from agents_for_tests import NeverFinishes, Switchboard

WAITER = NeverFinishes()
SWITCHBOARD = Switchboard({"wait": WAITER}, default=echo.agent.executor)
EXTENDED = AgentCard(
    name="Switchboard (extended)",
    description="More for members.",
    url="",
    version="1.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="audit", name="Audit", description="Audits.", tags=["internal"])],
)
HOOK = "https://client.example.com/hook"
V1 = (("a2a-version", "1.0"),)


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    agent = Agent(
        SWITCHBOARD,
        name="gRPC agent",
        push_notifications=True,
        extended_card=EXTENDED,
        extensions=echo.agent.extensions,
    )
    app = create_app(agent, public_url="http://127.0.0.1:9/", grpc_port=0)
    async with app.router.lifespan_context(app):
        served = app.state.service.interfaces.served_interfaces("http://127.0.0.1/")
        target = next(i.url for i in served if i.transport == TransportProtocol.GRPC)
        async with grpc.aio.insecure_channel(target) as opened:
            yield opened


def user_message(text: str, message_id: str = "m-1") -> pb.Message:
    return pb.Message(message_id=message_id, role=pb.ROLE_USER, parts=[pb.Part(text=text)])


def send_request(text: str, **configuration: Any) -> pb.SendMessageRequest:
    config = pb.SendMessageConfiguration(**configuration)
    return pb.SendMessageRequest(message=user_message(text), configuration=config)


def status_of(error: grpc.aio.AioRpcError) -> status_pb2.Status:
    """The google.rpc.Status a failed call carries in its trailers."""
    trailers = dict(error.trailing_metadata() or ())
    return status_pb2.Status.FromString(trailers["grpc-status-details-bin"])


def reason(error: grpc.aio.AioRpcError) -> str:
    info = error_details_pb2.ErrorInfo()
    assert status_of(error).details[0].Unpack(info)
    assert info.domain == "a2a-protocol.org"
    return str(info.reason)


async def test_send_message_returns_the_finished_task_and_the_version(
    channel: grpc.aio.Channel,
) -> None:
    call = rpc.A2AServiceStub(channel).SendMessage(send_request("hello"), metadata=V1)
    response = await call
    assert response.task.status.state == pb.TASK_STATE_COMPLETED
    assert response.task.artifacts[0].parts[0].text == "hello"
    assert response.task.history[0].message_id == "m-1"
    assert ("a2a-version", "1.0") in tuple(await call.initial_metadata())


async def test_stream_get_and_list(channel: grpc.aio.Channel) -> None:
    stub = rpc.A2AServiceStub(channel)
    events = [event async for event in stub.SendStreamingMessage(send_request("streamed"))]
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds[0] == "task"
    assert "artifact_update" in kinds
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    task_id = events[0].task.id

    task = await stub.GetTask(pb.GetTaskRequest(id=task_id, history_length=0))
    assert task.id == task_id
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert not task.history

    page = await stub.ListTasks(pb.ListTasksRequest(context_id=task.context_id))
    assert [listed.id for listed in page.tasks] == [task_id]
    assert not page.tasks[0].artifacts  # only with include_artifacts


async def test_subscribe_follows_a_task_until_it_is_canceled(channel: grpc.aio.Channel) -> None:
    stub = rpc.A2AServiceStub(channel)
    stream = stub.SendStreamingMessage(send_request("wait for it"))
    first = await anext(aiter(stream))
    task_id = first.task.id
    await WAITER.started.wait()

    subscription = aiter(stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id)))
    snapshot = await anext(subscription)
    assert snapshot.task.id == task_id

    canceled = await stub.CancelTask(pb.CancelTaskRequest(id=task_id))
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    rest = [event async for event in subscription]
    assert rest[-1].status_update.status.state == pb.TASK_STATE_CANCELED
    stream.cancel()

    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.CancelTask(pb.CancelTaskRequest(id=task_id))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert reason(refused.value) == "TASK_NOT_CANCELABLE"


async def test_push_configs(channel: grpc.aio.Channel) -> None:
    stub = rpc.A2AServiceStub(channel)
    task = (await stub.SendMessage(send_request("push"))).task
    created = await stub.CreateTaskPushNotificationConfig(
        pb.TaskPushNotificationConfig(task_id=task.id, id="hook-1", url=HOOK, token="t")
    )
    assert (created.task_id, created.id, created.url) == (task.id, "hook-1", HOOK)
    got = await stub.GetTaskPushNotificationConfig(
        pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="hook-1")
    )
    assert got.token == "t"
    listed = await stub.ListTaskPushNotificationConfigs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id)
    )
    assert [config.id for config in listed.configs] == ["hook-1"]
    await stub.DeleteTaskPushNotificationConfig(
        pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="hook-1")
    )
    with pytest.raises(grpc.aio.AioRpcError) as gone:
        await stub.GetTaskPushNotificationConfig(
            pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="hook-1")
        )
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND


async def test_extended_card_lists_the_grpc_interfaces(channel: grpc.aio.Channel) -> None:
    card = await rpc.A2AServiceStub(channel).GetExtendedAgentCard(pb.GetExtendedAgentCardRequest())
    assert card.name == "Switchboard (extended)"
    grpc_versions = {
        i.protocol_version for i in card.supported_interfaces if i.protocol_binding == "GRPC"
    }
    assert grpc_versions == {"1.0", "0.3"}
    grpc_urls = {i.url for i in card.supported_interfaces if i.protocol_binding == "GRPC"}
    assert all(url.startswith("127.0.0.1:") for url in grpc_urls)

    card_v0_3 = await rpc3.A2AServiceStub(channel).GetAgentCard(pb3.GetAgentCardRequest())
    assert card_v0_3.name == "Switchboard (extended)"


async def test_errors_are_status_codes_with_error_info(channel: grpc.aio.Channel) -> None:
    stub = rpc.A2AServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await stub.GetTask(pb.GetTaskRequest(id="no-such-task"))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert reason(missing.value) == "TASK_NOT_FOUND"
    assert status_of(missing.value).code == grpc.StatusCode.NOT_FOUND.value[0]

    with pytest.raises(grpc.aio.AioRpcError) as invalid:
        await stub.SendMessage(pb.SendMessageRequest(message=user_message("x", message_id="")))
    assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT

    with pytest.raises(grpc.aio.AioRpcError) as bad_name:
        await rpc3.A2AServiceStub(channel).GetTask(pb3.GetTaskRequest(name="jobs/1"))
    assert bad_name.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "tasks/id" in (bad_name.value.details() or "")


@pytest.mark.parametrize("version", ["0.3", "2.0"])
async def test_a_version_other_than_the_services_is_refused(
    channel: grpc.aio.Channel, version: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await rpc.A2AServiceStub(channel).SendMessage(
            send_request("x"), metadata=(("a2a-version", version),)
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION  # spec 1.0, 5.4
    assert reason(refused.value) == "VERSION_NOT_SUPPORTED"


async def test_extensions_are_activated_by_metadata(channel: grpc.aio.Channel) -> None:
    call = rpc.A2AServiceStub(channel).SendMessage(
        send_request("timed"), metadata=(("a2a-extensions", TIMING_URI),)
    )
    response = await call
    assert f"{TIMING_URI}/elapsedMs" in response.task.metadata
    assert ("a2a-extensions", TIMING_URI) in tuple(await call.initial_metadata())


async def test_the_0_3_service(channel: grpc.aio.Channel) -> None:
    stub = rpc3.A2AServiceStub(channel)
    message = pb3.Message(message_id="m-3", role=pb3.ROLE_USER, content=[pb3.Part(text="old")])
    request = pb3.SendMessageRequest(
        request=message, configuration=pb3.SendMessageConfiguration(blocking=True)
    )
    call = stub.SendMessage(request)
    task = (await call).task
    assert task.status.state == pb3.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "old"
    assert ("a2a-version", "0.3") in tuple(await call.initial_metadata())

    events = [event async for event in stub.SendStreamingMessage(request)]
    assert events[-1].status_update.status.state == pb3.TASK_STATE_COMPLETED

    got = await stub.GetTask(pb3.GetTaskRequest(name=f"tasks/{task.id}"))
    assert got.id == task.id

    name = f"tasks/{task.id}/pushNotificationConfigs/hook-3"
    created = await stub.CreateTaskPushNotificationConfig(
        pb3.CreateTaskPushNotificationConfigRequest(
            parent=f"tasks/{task.id}",
            config_id="hook-3",
            config=pb3.TaskPushNotificationConfig(
                push_notification_config=pb3.PushNotificationConfig(url=HOOK)
            ),
        )
    )
    assert created.name == name
    listed = await stub.ListTaskPushNotificationConfig(
        pb3.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task.id}")
    )
    assert [config.name for config in listed.configs] == [name]
    await stub.DeleteTaskPushNotificationConfig(
        pb3.DeleteTaskPushNotificationConfigRequest(name=name)
    )

    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.GetTask(pb3.GetTaskRequest(name="tasks/x"), metadata=V1)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
