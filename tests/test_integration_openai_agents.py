"""An OpenAI Agents SDK agent served by accord (`accord.integrations.openai_agents`), its model
a scripted `Model` of the test's own, driven by the official a2a-sdk client in 1.0 and 0.3."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

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

framework("agents", "openai-agents")

from agents import Agent as SdkAgent  # noqa: E402
from agents import (  # noqa: E402
    Model,
    RunConfig,
    RunContextWrapper,
    ToolOutputImage,
    function_tool,
)
from openai.types.responses import (  # noqa: E402
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
)

from accord.integrations.openai_agents import as_agent  # noqa: E402

OFFLINE = RunConfig(tracing_disabled=True)

Step = list[str] | tuple[str, dict[str, Any]]
"""What the scripted model does next: stream these words, or call this tool with these args."""


HELD = Held("held")


class Scripted(Model):
    """A model whose every turn `decide` scripts from the input items."""

    def __init__(self, decide: Callable[[list[Any]], Step]) -> None:
        self.decide = decide

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the adapter streams")

    async def stream_response(  # type: ignore[override]
        self, system_instructions: str | None, input: str | list[Any], *args: Any, **kwargs: Any
    ) -> AsyncIterator[Any]:
        items = input if isinstance(input, list) else [input]
        if users(items):
            await HELD.hold(user_text(users(items)[-1]))
        step = self.decide(items)
        output: list[Any]
        if isinstance(step, tuple):
            name, arguments = step
            call = ResponseFunctionToolCall(
                type="function_call",
                name=name,
                arguments=json.dumps(arguments),
                call_id=f"call-{name}",
                id="call",
                status="completed",
            )
            output = [call]
        else:
            for index, word in enumerate(step):
                yield ResponseTextDeltaEvent(
                    type="response.output_text.delta",
                    item_id="msg",
                    output_index=0,
                    content_index=0,
                    delta=word,
                    logprobs=[],
                    sequence_number=index,
                )
            text = ResponseOutputText(type="output_text", text="".join(step), annotations=[])
            output = [
                ResponseOutputMessage(
                    id="msg", type="message", role="assistant", status="completed", content=[text]
                )
            ]
        response = Response(
            id="response",
            created_at=0,
            model="scripted",
            object="response",
            output=output,
            tool_choice="none",
            tools=[],
            top_p=None,
            parallel_tool_calls=False,
            status="completed",
        )
        yield ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=99
        )


def users(items: list[Any]) -> list[Any]:
    return [i for i in items if isinstance(i, dict) and i.get("role") == "user"]


def user_text(item: dict[str, Any]) -> str:
    content = item["content"]
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content if c["type"] == "input_text")


def front_desk(items: list[Any]) -> Step:
    last = items[-1]
    if isinstance(last, dict) and last.get("type") == "function_call_output":
        return ["done: ", str(last["output"])]
    latest = users(items)[-1]
    images = [c for c in latest["content"] if isinstance(c, dict) and c["type"] == "input_image"]
    if images:
        return ("flip", {"image": images[0]["image_url"]})
    said = user_text(latest)
    if said == "fail":
        raise RuntimeError(SECRET)
    if said in ("whoami", "wait", "delete_everything"):
        return (said, {})
    if said == "billing":
        return ("transfer_to_billing", {})
    return [f"turn {len(users(items))}: ", "you said ", said]


@function_tool
def whoami(ctx: RunContextWrapper[Any]) -> str:
    """Who is asking.

    The caller, as the server authenticated them."""
    return str(ctx.context.id)


@function_tool
def flip(image: str) -> ToolOutputImage:
    """Flips an image."""
    header, _, encoded = image.partition(",")
    flipped = base64.b64encode(base64.b64decode(encoded)[::-1]).decode()
    return ToolOutputImage(image_url=f"{header},{flipped}")


@function_tool(needs_approval=True)
def delete_everything() -> str:
    """Deletes everything."""
    return "deleted"


def front(gate: Gate | None = None) -> SdkAgent[Any]:
    @function_tool
    async def wait() -> str:
        """Waits for ever."""
        assert gate is not None
        await gate.hold()
        return "never"

    billing = SdkAgent(
        name="Billing",
        handoff_description="Answers billing questions.",
        model=Scripted(lambda items: ["billing ", "here"]),
    )
    return SdkAgent(
        name="Front desk",
        handoff_description="Answers who you are.",
        model=Scripted(front_desk),
        tools=[whoami, flip, delete_everything, wait],
        handoffs=[billing],
    )


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served(as_agent(front(), run_config=OFFLINE)) as url:
        yield url


async def test_the_card_has_the_agent_and_its_tools(url: str) -> None:
    card = await card_of(url)
    assert card["name"] == "Front desk"
    assert card["description"] == "Answers who you are."
    assert skills_of(card) == [
        ("whoami", "Who is asking."),
        ("flip", "Flips an image."),
        ("delete_everything", "Deletes everything."),
        ("wait", "Waits for ever."),
    ]


@pytest.mark.parametrize("interface", INTERFACES)
async def test_text_deltas_stream_as_chunks_and_tool_calls_as_notes(
    url: str, interface: tuple[str, str]
) -> None:
    answer = await streamed(url, interface, "whoami")
    assert answer.notes == ["calling whoami"]
    assert answer.appends == [False, True]
    assert answer.text == f"done: {CALLER.id}"


@pytest.mark.parametrize("interface", INTERFACES)
async def test_a_handoff_is_a_note(url: str, interface: tuple[str, str]) -> None:
    answer = await streamed(url, interface, "billing")
    assert (answer.notes, answer.text) == (["handed off to Billing"], "billing here")


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "send"])
async def test_a_context_keeps_its_conversation(
    url: str, interface: tuple[str, str], streaming: bool
) -> None:
    answers = await conversation(url, interface, ["one", "two"], streaming=streaming)
    assert answers == ["turn 1: you said one", "turn 2: you said two"]


@pytest.mark.parametrize("interface", INTERFACES)
async def test_two_messages_of_one_context_take_turns(url: str, interface: tuple[str, str]) -> None:
    answers, overlapped = await turns_of_one_context(url, interface, HELD)
    assert answers == ["turn 2: you said held", "turn 3: you said two", "turn 4: you said three"]
    assert not overlapped  # the second waited for the first to end


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize(("answer", "result"), [("yes", "deleted"), ("no", "rejected")])
async def test_a_tool_needing_approval_asks_the_caller(
    url: str, interface: tuple[str, str], answer: str, result: str
) -> None:
    asked, done, _ = await asked_then_answered(url, interface, "delete_everything", answer)
    assert status_text(asked) == "May I call delete_everything? (yes or no)"
    assert text_of(done).startswith("done: "), text_of(done)
    assert (result == "deleted") == (text_of(done) == "done: deleted")


@pytest.mark.parametrize("interface", INTERFACES)
async def test_files_go_in_and_out(url: str, interface: tuple[str, str]) -> None:
    await flipped_image(url, interface, "flip it")


@pytest.mark.parametrize("interface", INTERFACES)
async def test_structured_output_is_data(interface: tuple[str, str]) -> None:
    forecast = json.dumps(FORECAST)
    weather = SdkAgent(
        name="Weather", model=Scripted(lambda items: [forecast]), output_type=Forecast
    )
    await check_forecast_is_data(as_agent(weather, run_config=OFFLINE), interface)


@pytest.mark.parametrize("interface", INTERFACES)
async def test_cancel_stops_the_run(interface: tuple[str, str]) -> None:
    gate = Gate()
    await check_cancel_stops_the_run(as_agent(front(gate), run_config=OFFLINE), gate, interface)


@pytest.mark.parametrize("interface", INTERFACES)
async def test_a_failure_tells_the_caller_only_a_reference(
    url: str, interface: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    await check_failure_shows_a_reference(url, interface, "fail", caplog)
