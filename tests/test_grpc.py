"""What is gRPC's own on a real grpc.aio server: metadata, cards, resource names, status
details (the operations themselves are in test_operations.py)."""

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
from accord.types import TransportProtocol
from agents_for_tests import EXTENDED_CARD

V1 = (("a2a-version", "1.0"),)


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    agent = Agent(
        echo.agent.executor,
        name="gRPC agent",
        push_notifications=True,
        extended_card=EXTENDED_CARD,
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


async def test_a_0_3_resource_name_that_names_no_task_is_invalid(
    channel: grpc.aio.Channel,
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as bad_name:
        await rpc3.A2AServiceStub(channel).GetTask(pb3.GetTaskRequest(name="jobs/1"))
    assert bad_name.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "tasks/id" in (bad_name.value.details() or "")


async def test_a_version_no_service_speaks_is_refused(channel: grpc.aio.Channel) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await rpc.A2AServiceStub(channel).SendMessage(
            send_request("x"), metadata=(("a2a-version", "2.0"),)
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
