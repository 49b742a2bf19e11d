"""What an agent's author reaches for: parts made from bytes, files and objects; a task's
text; the files, data and conversation of a request; a client in-process for tests."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

import accord
from accord.agents import EventSink
from accord.core.call_context import CallContext
from accord.errors import InvalidParams
from accord.extensions import Extension
from accord.testing import agent_client
from accord.types import (
    Artifact,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Message,
    MessageSendParams,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)

# --- parts ------------------------------------------------------------------------------------


@given(st.binary(max_size=512))
def test_a_file_from_bytes_gives_the_same_bytes_back(data: bytes) -> None:
    part = FilePart.from_bytes(data, "report.pdf")

    assert part.content == data
    assert part.file.name == "report.pdf"
    assert part.file.mime_type == "application/pdf"
    assert isinstance(part.file, FileWithBytes)
    assert base64.b64decode(part.file.bytes) == data


def test_a_file_from_bytes_keeps_the_media_type_given_and_guesses_none_without_a_name() -> None:
    assert FilePart.from_bytes(b"x", "a.bin", "image/png").file.mime_type == "image/png"
    assert FilePart.from_bytes(b"x").file.mime_type is None
    assert FilePart.from_bytes(b"x", "notes.unknownext").file.mime_type == (
        "application/octet-stream"
    )


def test_a_file_from_a_path_is_named_after_it(tmp_path: Path) -> None:
    path = tmp_path / "chart.png"
    path.write_bytes(b"\x89PNG...")

    part = FilePart.from_path(path)
    renamed = FilePart.from_path(str(path), name="figure-1.png")

    assert (part.content, part.file.name, part.file.mime_type) == (
        b"\x89PNG...",
        "chart.png",
        "image/png",
    )
    assert renamed.file.name == "figure-1.png"
    with pytest.raises(FileNotFoundError):
        FilePart.from_path(tmp_path / "missing.txt")


def test_a_file_by_uri_has_no_content_here() -> None:
    part = FilePart(file=FileWithUri(uri="https://example.com/a.png"))

    with pytest.raises(ValueError, match=r"example\.com/a\.png"):
        _ = part.content


class Quote(BaseModel):
    amount: float
    currency: str


@dataclasses.dataclass
class Trip:
    city: str
    day: date


def test_data_from_mappings_models_and_dataclasses() -> None:
    assert DataPart.of({"a": 1}).data == {"a": 1}
    assert DataPart.of(Quote(amount=2.5, currency="EUR")).data == {
        "amount": 2.5,
        "currency": "EUR",
    }
    trip = Trip("Oslo", date(2026, 1, 31))
    assert DataPart.of(trip).data == {"city": "Oslo", "day": "2026-01-31"}


@pytest.mark.parametrize("value", [[1, 2], "text", 3, None])
def test_data_must_be_an_object(value: object) -> None:
    with pytest.raises(TypeError, match="JSON object"):
        DataPart.of(value)


# --- a task's text -----------------------------------------------------------------------------


def _task(state: TaskState, artifacts: list[Artifact] | None, message: str | None = None) -> Task:
    status = TaskStatus(state=state, message=Message.agent(message) if message else None)
    return Task(id="t", context_id="c", status=status, artifacts=artifacts)


def test_a_tasks_text_joins_its_artifacts_text() -> None:
    artifacts = [
        Artifact(artifact_id="a", parts=[TextPart(text="Hello, "), TextPart(text="Ada")]),
        Artifact(artifact_id="b", parts=[DataPart(data={"x": 1})]),
        Artifact(artifact_id="c", parts=[TextPart(text="Bye")]),
    ]

    assert _task(TaskState.COMPLETED, artifacts, "done").text == "Hello, Ada\nBye"


def test_a_task_without_text_artifacts_reads_as_its_status_message() -> None:
    assert _task(TaskState.INPUT_REQUIRED, None, "To where?").text == "To where?"
    assert _task(TaskState.WORKING, None).text == ""


# --- a request's files, data and conversation, and the client in-process ----------------------


class Remembers(accord.AgentExecutor):
    """Says what it was sent and how long the conversation is; asks once for more."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        said = [
            f"new={context.task is None}",
            f"turns={[m.text for m in context.conversation]}",
            f"files={[(f.file.name, f.content) for f in context.files]}",
            f"data={context.data}",
        ]
        if context.task is None:
            await task.requires_input("; ".join(said))
            return
        await task.add_artifact(FilePart.from_bytes(b"\x00\x01", "out.bin"), name="binary")
        await task.add_artifact("; ".join(said), name="summary")
        await task.complete()


@pytest.fixture
async def client() -> AsyncIterator[accord.Client]:
    async with agent_client(accord.Agent(Remembers(), name="Remembers")) as client:
        yield client


async def test_a_request_tells_its_files_data_and_the_conversation_so_far(
    client: accord.Client,
) -> None:
    parts = [FilePart.from_bytes(b"abc", "a.txt"), DataPart.of({"n": 1})]

    first = await client.send("one", parts=parts)
    assert isinstance(first, Task)
    second = await client.send("two", task_id=first.id)
    assert isinstance(second, Task)

    assert first.status.state is TaskState.INPUT_REQUIRED
    assert first.text == "new=True; turns=['one']; files=[('a.txt', b'abc')]; data=[{'n': 1}]"
    assert second.status.state is TaskState.COMPLETED
    question = first.text
    assert second.text == f"new=False; turns=['one', {question!r}, 'two']; files=[]; data=[]"
    assert second.artifacts is not None and second.artifacts[0].parts[0].content == b"\x00\x01"


class Reports(accord.AgentExecutor):
    """Reports, once working, what the request says of the task it arrived to; asks once."""

    async def execute(self, context: accord.RequestContext, events: EventSink) -> None:
        task = accord.TaskUpdater(context, events)
        await task.start_work()  # the first event: the task moves on
        arrival = context.status_on_arrival
        assert context.task is not None
        said = (
            f"new={context.is_new_task}; "
            f"arrived={arrival.state.value if arrival else None}; "
            f"asked={arrival.message.text if arrival and arrival.message else None}; "
            f"now={context.task.status.state.value}"
        )
        if context.is_new_task:
            await task.requires_input(f"more? ({said})")
        else:
            await task.complete(said)


async def test_a_request_says_how_it_found_the_task_after_the_task_moved_on() -> None:
    async with agent_client(accord.Agent(Reports(), name="Reports")) as client:
        first = await client.send("one")
        assert isinstance(first, Task)
        second = await client.send("two", task_id=first.id)
        assert isinstance(second, Task)

    question = "more? (new=True; arrived=None; asked=None; now=working)"
    assert first.status.message is not None and first.status.message.text == question
    assert second.status.message is not None
    assert second.status.message.text == (
        f"new=False; arrived=input-required; asked={question}; now=working"
    )


async def test_the_client_in_process_streams_too(client: accord.Client) -> None:
    events = [event async for event in client.stream("hi")]

    assert isinstance(events[0], Task)
    assert events[-1].status.state is TaskState.INPUT_REQUIRED  # type: ignore[union-attr]


# --- extensions and metadata from the client ---------------------------------------------------


class Tickets(Extension):
    """Sends must name a ticket in their metadata."""

    uri = "https://example.com/ext/tickets/v1"
    required = True

    async def shape_request(self, params: MessageSendParams, call: CallContext) -> None:
        if not (params.metadata or {}).get(self.metadata_key("ticket")):
            raise InvalidParams("a ticket is required")


@accord.agent(name="Support", extensions=[Tickets()])
def support(context: accord.RequestContext) -> str:
    return f"ticket {context.metadata[Tickets.uri + '/ticket']}: {context.text}"


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_a_client_activates_extensions_and_sends_metadata(version: str) -> None:
    metadata = {f"{Tickets.uri}/ticket": "T-7"}
    async with agent_client(support, version=version, extensions=[Tickets.uri]) as client:
        reply = await client.send("help", metadata=metadata)
    async with agent_client(support, version=version) as client:
        with pytest.raises(accord.A2AError, match="requires the extension"):
            await client.send("help", metadata=metadata)

    assert isinstance(reply, Message) and reply.text == "ticket T-7: help"
