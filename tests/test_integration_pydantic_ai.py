"""A PydanticAI agent served by accord (`accord.integrations.pydantic_ai`), its model one of
PydanticAI's own test doubles, driven by the official a2a-sdk client in 1.0 and 0.3."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterator

import pytest

from adapted_agents import (
    CALLER,
    FORECAST,
    INTERFACES,
    SECRET,
    Forecast,
    Gate,
    Held,
    asked_then_answered,
    card_of,
    check_cancel_stops_the_run,
    check_failure_shows_a_reference,
    check_forecast_is_data,
    conversation,
    flipped_image,
    framework,
    served,
    skills_of,
    status_text,
    streamed,
    text_of,
    turns_of_one_context,
)

framework("pydantic_ai", "pydantic-ai")

from pydantic_ai import Agent as PydanticAgent  # noqa: E402
from pydantic_ai import BinaryContent, DeferredToolRequests, RunContext  # noqa: E402
from pydantic_ai.messages import ModelMessage, ToolReturnPart, UserPromptPart  # noqa: E402
from pydantic_ai.models.function import (  # noqa: E402
    AgentInfo,
    DeltaToolCall,
    FunctionModel,
)
from pydantic_ai.models.test import TestModel  # noqa: E402

from accord.integrations.pydantic_ai import as_agent  # noqa: E402


def prompts(messages: list[ModelMessage]) -> list[str]:
    """What the user said so far, as the model sees it."""
    return [
        str(part.content)
        for m in messages
        for part in getattr(m, "parts", [])
        if isinstance(part, UserPromptPart)
    ]


async def model(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
    """A model that calls `whoami` first, then streams what it knows in three chunks."""
    last = messages[-1]
    if not any(isinstance(p, ToolReturnPart) for p in getattr(last, "parts", [])):
        await HELD.hold(prompts(messages)[-1])
        yield {0: DeltaToolCall(name="whoami", json_args="{}", tool_call_id="call-1")}
        return
    said = prompts(messages)
    yield f"turn {len(said)}: "
    yield f"you said {said[-1]!r}, "
    yield f"you are {last.parts[0].content}"  # type: ignore[union-attr]


HELD = Held("held")


def assistant() -> PydanticAgent[None, str]:
    agent = PydanticAgent(
        FunctionModel(stream_function=model),
        name="Assistant",
        description="Answers with who you are.",
    )

    @agent.tool
    def whoami(ctx: RunContext[None]) -> str:
        """Who the caller is.

        Read from the run's metadata."""
        assert ctx.metadata is not None
        return str(ctx.metadata["principal"].id)

    return agent


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served(as_agent(assistant())) as url:
        yield url


async def test_the_card_says_what_the_agent_is(url: str) -> None:
    card = await card_of(url)
    assert card["name"] == "Assistant"
    assert card["description"] == "Answers with who you are."
    assert skills_of(card) == [("whoami", "Who the caller is.")]
    assert card["capabilities"]["streaming"] is True


@pytest.mark.parametrize("interface", INTERFACES)
async def test_text_streams_as_chunks_and_tool_calls_as_notes(
    url: str, interface: tuple[str, str]
) -> None:
    answer = await streamed(url, interface, "hello")
    assert answer.notes == ["calling whoami"]
    assert answer.appends == [False, True, True]
    assert answer.text == f"turn 1: you said 'hello', you are {CALLER.id}"


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "send"])
async def test_a_context_keeps_its_conversation(
    url: str, interface: tuple[str, str], streaming: bool
) -> None:
    answers = await conversation(
        url, interface, ["one", "two"], streaming=streaming, elsewhere="three"
    )
    assert answers == [
        "turn 1: you said 'one', you are alice",
        "turn 2: you said 'two', you are alice",
        "turn 1: you said 'three', you are alice",
    ]


@pytest.mark.parametrize("interface", INTERFACES)
async def test_two_messages_of_one_context_take_turns(url: str, interface: tuple[str, str]) -> None:
    answers, overlapped = await turns_of_one_context(url, interface, HELD)
    assert answers == [
        "turn 2: you said 'held', you are alice",
        "turn 3: you said 'two', you are alice",
        "turn 4: you said 'three', you are alice",
    ]
    assert not overlapped  # the second waited for the first to end


@pytest.mark.parametrize("interface", INTERFACES)
async def test_structured_output_is_data(interface: tuple[str, str]) -> None:
    agent = PydanticAgent(TestModel(custom_output_args=FORECAST), output_type=Forecast)
    await check_forecast_is_data(as_agent(agent, name="Weather"), interface)


async def mirror(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[dict[int, DeltaToolCall]]:
    """A model that answers with the image it was given, as its output."""
    [content] = [
        c
        for part in messages[-1].parts
        if isinstance(part, UserPromptPart)
        for c in part.content
        if isinstance(c, BinaryContent)
    ]
    args = BinaryContent(content.data[::-1], media_type=content.media_type)
    output = info.output_tools[0].name
    yield {0: DeltaToolCall(name=output, json_args=_json(args), tool_call_id="out")}


def _json(content: BinaryContent) -> str:
    encoded = base64.urlsafe_b64encode(content.data).decode()
    return json.dumps({"data": encoded, "media_type": content.media_type})


@pytest.mark.parametrize("interface", INTERFACES)
async def test_files_go_in_and_out(interface: tuple[str, str]) -> None:
    agent = PydanticAgent(FunctionModel(stream_function=mirror), output_type=BinaryContent)
    with served(as_agent(agent, name="Mirror")) as url:
        await flipped_image(url, interface, "flip it")


def held_agent(gate: Gate) -> PydanticAgent[None, str]:
    agent = PydanticAgent(TestModel(call_tools=["wait"]), name="Slow")

    @agent.tool_plain
    async def wait() -> str:
        """Waits for ever."""
        await gate.hold()
        return "never"

    return agent


@pytest.mark.parametrize("interface", INTERFACES)
async def test_cancel_stops_the_run(interface: tuple[str, str]) -> None:
    gate = Gate()
    await check_cancel_stops_the_run(as_agent(held_agent(gate)), gate, interface)


def failing_agent() -> PydanticAgent[None, str]:
    agent = PydanticAgent(TestModel(call_tools=["lookup"]), name="Failing")

    @agent.tool_plain
    def lookup() -> str:
        """Fails with a detail the caller must not see."""
        raise RuntimeError(SECRET)

    return agent


@pytest.mark.parametrize("interface", INTERFACES)
async def test_a_failure_tells_the_caller_only_a_reference(
    interface: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    with served(as_agent(failing_agent())) as url:
        await check_failure_shows_a_reference(url, interface, "look it up", caplog)


async def careful(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
    """A model that deletes everything when asked, then says what the tool returned."""
    returned = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if returned:
        yield f"done: {returned[0].content}"
    else:
        yield {0: DeltaToolCall(name="delete_everything", json_args="{}", tool_call_id="d-1")}


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize(("reply", "deleted"), [("yes", True), ("no", False)])
async def test_a_tool_needing_approval_asks_the_caller(
    interface: tuple[str, str], reply: str, deleted: bool
) -> None:
    agent = PydanticAgent(
        FunctionModel(stream_function=careful), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(requires_approval=True)
    def delete_everything() -> str:
        """Deletes everything."""
        return "deleted"

    with served(as_agent(agent, name="Careful")) as url:
        asked, done, _ = await asked_then_answered(url, interface, "clean up", reply)
    assert status_text(asked) == "May I call delete_everything? (yes or no)"
    assert (text_of(done) == "done: deleted") is deleted
