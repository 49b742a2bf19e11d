"""A Google ADK agent served by accord (`accord.integrations.adk`): a custom `BaseAgent` with
no model, run by ADK's own `Runner`, driven by the official a2a-sdk client in 1.0 and 0.3."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
from typing import Any

import pytest

from adapted_agents import (
    CALLER,
    INTERFACES,
    SECRET,
    Gate,
    Held,
    booking,
    card_of,
    check_cancel_stops_the_run,
    check_failure_shows_a_reference,
    flipped_image,
    framework,
    served,
    skills_of,
    streamed,
    text_of,
    turns_of_one_context,
)

framework("google.adk", "adk")

from google.adk.agents import BaseAgent  # noqa: E402
from google.adk.agents.invocation_context import InvocationContext  # noqa: E402
from google.adk.events import Event  # noqa: E402
from google.genai import types  # noqa: E402

from accord.integrations.adk import as_agent  # noqa: E402


def said(ctx: InvocationContext) -> str:
    content = ctx.user_content
    return "".join(p.text or "" for p in (content.parts or [])) if content else ""


def says(ctx: InvocationContext, author: str, *parts: types.Part, **fields: Any) -> Event:
    content = types.Content(role="model", parts=list(parts))
    return Event(invocation_id=ctx.invocation_id, author=author, content=content, **fields)


HELD = Held("held")


class Helper(BaseAgent):
    """Says it is here."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield says(ctx, self.name, types.Part(text="helper here"))


class Concierge(BaseAgent):
    """Books trips and flips images."""

    gate: Any = None

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        content = ctx.user_content
        parts = content.parts if content and content.parts else []
        answers = [p.function_response for p in parts if p.function_response]
        if answers:
            city = (answers[0].response or {})["result"]
            yield says(ctx, self.name, types.Part(text=f"Booked {city}"))
            return
        text = said(ctx)
        images = [p.inline_data for p in parts if p.inline_data]
        if images:
            flipped = types.Blob(data=(images[0].data or b"")[::-1], mime_type="image/png")
            yield says(ctx, self.name, types.Part(text="flipped"), types.Part(inline_data=flipped))
        elif text == "book":
            ask = types.FunctionCall(
                id="ask-1", name="adk_request_input", args={"message": "Which city?"}
            )
            yield says(
                ctx, self.name, types.Part(function_call=ask), long_running_tool_ids={"ask-1"}
            )
        elif text == "lookup":
            call = types.FunctionCall(id="call-1", name="lookup", args={"city": "Oslo"})
            yield says(ctx, self.name, types.Part(function_call=call))
            found = types.FunctionResponse(id="call-1", name="lookup", response={"km": 1})
            yield says(ctx, self.name, types.Part(function_response=found))
            yield says(ctx, self.name, types.Part(text="Oslo is 1 km away"))
        elif text == "helper":
            async for event in self.sub_agents[0].run_async(ctx):
                yield event
        elif text == "wait":
            await self.gate.hold()
        elif text == "fail":
            raise RuntimeError(SECRET)
        elif text == "error":
            yield Event(
                invocation_id=ctx.invocation_id,
                author=self.name,
                error_code="INTERNAL",
                error_message=SECRET,
            )
        else:
            await HELD.hold(text)
            turns = sum(1 for e in ctx.session.events if e.author == "user")
            principal = ctx.session.state["principal"]["id"]
            words = [f"turn {turns}: ", "hello ", principal]
            for word in words:
                yield says(ctx, self.name, types.Part(text=word), partial=True)
            yield says(ctx, self.name, types.Part(text="".join(words)))


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    concierge = Concierge(
        name="concierge",
        description="Books trips and flips images.",
        sub_agents=[Helper(name="helper")],
    )
    with served(as_agent(concierge)) as url:
        yield url


async def test_the_card_has_the_agent_and_its_sub_agents(url: str) -> None:
    helper = Concierge(name="helper", description="Helps.")
    root = Concierge(name="desk", description="The front desk.", sub_agents=[helper])
    with served(as_agent(root)) as desk:
        card = await card_of(desk)
    assert (card["name"], card["description"]) == ("desk", "The front desk.")
    assert skills_of(card) == [("helper", "Helps.")]


@pytest.mark.parametrize("interface", INTERFACES)
async def test_partial_events_stream_as_chunks(url: str, interface: tuple[str, str]) -> None:
    answer = await streamed(url, interface, "hi")
    assert answer.appends == [False, True, True]
    assert answer.text == f"turn 1: hello {CALLER.id}"


@pytest.mark.parametrize("interface", INTERFACES)
async def test_function_calls_are_notes(url: str, interface: tuple[str, str]) -> None:
    answer = await streamed(url, interface, "lookup")
    assert (answer.notes, answer.text) == (["calling lookup"], "Oslo is 1 km away")


@pytest.mark.parametrize("interface", INTERFACES)
async def test_a_sub_agent_taking_over_is_a_note(url: str, interface: tuple[str, str]) -> None:
    answer = await streamed(url, interface, "helper")
    assert (answer.notes, answer.text) == (["helper takes over"], "helper here")


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "send"])
async def test_a_request_for_input_asks_and_the_answer_resumes(
    url: str, interface: tuple[str, str], streaming: bool
) -> None:
    # the session kept "book", the answer (a function response) and "hi"
    assert await booking(url, interface, streaming=streaming) == "turn 3: hello alice"


@pytest.mark.parametrize("interface", INTERFACES)
async def test_two_messages_of_one_context_take_turns(url: str, interface: tuple[str, str]) -> None:
    answers, overlapped = await turns_of_one_context(url, interface, HELD)
    assert answers == ["turn 2: hello alice", "turn 3: hello alice", "turn 4: hello alice"]
    assert not overlapped  # the second waited for the first to end


@pytest.mark.parametrize("interface", INTERFACES)
async def test_files_go_in_and_out(url: str, interface: tuple[str, str]) -> None:
    assert text_of(await flipped_image(url, interface, "flip it")) == "flipped"


@pytest.mark.parametrize("interface", INTERFACES)
async def test_cancel_stops_the_run(interface: tuple[str, str]) -> None:
    gate = Gate()
    await check_cancel_stops_the_run(as_agent(Concierge(name="slow", gate=gate)), gate, interface)


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("how", ["fail", "error"], ids=["raises", "error-event"])
async def test_a_failure_tells_the_caller_only_a_reference(
    url: str, interface: tuple[str, str], how: str, caplog: pytest.LogCaptureFixture
) -> None:
    await check_failure_shows_a_reference(url, interface, how, caplog)
