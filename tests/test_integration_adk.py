"""A Google ADK agent served by accord (`accord.integrations.adk`): a custom `BaseAgent` with
no model, run by ADK's own `Runner`, driven by the official a2a-sdk client in 1.0 and 0.3."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Iterator
from typing import Any

import httpx
import pytest
from a2a.types import CancelTaskRequest, Part, TaskState

from adapted_agents import (
    CALLER,
    INTERFACES,
    Gate,
    answered_files,
    exchange,
    framework,
    kind,
    last_task,
    message,
    notes,
    sdk,
    served,
    start,
    status_text,
    text_of,
)

framework("google.adk", "adk")

from google.adk.agents import BaseAgent  # noqa: E402
from google.adk.agents.invocation_context import InvocationContext  # noqa: E402
from google.adk.events import Event  # noqa: E402
from google.genai import types  # noqa: E402

from accord.integrations.adk import as_agent  # noqa: E402

SECRET = "the database password is hunter2"
PNG = b"\x89PNG\r\n\x1a\n not really an image"


def said(ctx: InvocationContext) -> str:
    content = ctx.user_content
    return "".join(p.text or "" for p in (content.parts or [])) if content else ""


def says(ctx: InvocationContext, author: str, *parts: types.Part, **fields: Any) -> Event:
    content = types.Content(role="model", parts=list(parts))
    return Event(invocation_id=ctx.invocation_id, author=author, content=content, **fields)


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
            turns = sum(1 for e in ctx.session.events if e.author == "user")
            principal = ctx.session.state["principal"]["id"]
            words = [f"turn {turns}: ", "hello ", principal]
            for word in words:
                yield says(ctx, self.name, types.Part(text=word), partial=True)
            yield says(ctx, self.name, types.Part(text="".join(words)))


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    concierge = Concierge(name="concierge", description="Books trips and flips images.")
    with served(as_agent(concierge)) as url:
        yield url


async def test_the_card_has_the_agent_and_its_sub_agents(url: str) -> None:
    helper = Concierge(name="helper", description="Helps.")
    root = Concierge(name="desk", description="The front desk.", sub_agents=[helper])
    with served(as_agent(root)) as desk:
        async with httpx.AsyncClient() as http:
            card = (await http.get(f"{desk}/.well-known/agent-card.json")).json()
    assert (card["name"], card["description"]) == ("desk", "The front desk.")
    assert [(s["id"], s["description"]) for s in card["skills"]] == [("helper", "Helps.")]


@pytest.mark.parametrize("interface", INTERFACES)
async def test_partial_events_stream_as_chunks(url: str, interface: tuple[str, str]) -> None:
    async with sdk(url, interface) as client:
        events = await exchange(client, message("hi"))
    chunks = [e.artifact_update for e in events if kind(e) == "artifact_update"]
    assert [c.append for c in chunks] == [False, True, True]
    task = last_task(events)
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert text_of(task) == f"turn 1: hello {CALLER.id}"


@pytest.mark.parametrize("interface", INTERFACES)
async def test_function_calls_are_notes(url: str, interface: tuple[str, str]) -> None:
    async with sdk(url, interface) as client:
        events = await exchange(client, message("lookup"))
    assert notes(events) == ["calling lookup"]
    assert text_of(last_task(events)) == "Oslo is 1 km away"


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "send"])
async def test_a_request_for_input_asks_and_the_answer_resumes(
    url: str, interface: tuple[str, str], streaming: bool
) -> None:
    async with sdk(url, interface, streaming=streaming) as client:
        asked = last_task(await exchange(client, message("book")))
        answer = message("Oslo", context_id=asked.context_id, task_id=asked.id)
        booked = last_task(await exchange(client, answer))
        later = last_task(await exchange(client, message("hi", context_id=asked.context_id)))
    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert status_text(asked) == "Which city?"
    assert booked.id == asked.id
    assert booked.status.state == TaskState.TASK_STATE_COMPLETED
    assert text_of(booked) == "Booked Oslo"
    assert text_of(later) == "turn 3: hello alice"  # the session kept book, Oslo and hi


@pytest.mark.parametrize("interface", INTERFACES)
async def test_files_go_in_and_out(url: str, interface: tuple[str, str]) -> None:
    async with sdk(url, interface) as client:
        image = Part(raw=PNG, media_type="image/png", filename="in.png")
        task = last_task(await exchange(client, message("flip it", image)))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert text_of(task) == "flipped"
    assert answered_files(task) == [(PNG[::-1], "image/png")]


@pytest.mark.parametrize("interface", INTERFACES)
async def test_cancel_stops_the_run(interface: tuple[str, str]) -> None:
    gate = Gate()
    with served(as_agent(Concierge(name="slow", gate=gate))) as url:
        async with sdk(url, interface, streaming=False) as client:
            started = await start(client, message("wait"))
            await gate.wait(gate.reached)
            canceled = await client.cancel_task(CancelTaskRequest(id=started.id))
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    await gate.wait(gate.cancelled)


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("how", ["fail", "error"], ids=["raises", "error-event"])
async def test_a_failure_tells_the_caller_only_a_reference(
    url: str, interface: tuple[str, str], how: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    async with sdk(url, interface) as client:
        task = last_task(await exchange(client, message(how)))
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert "reference" in status_text(task) and SECRET not in status_text(task)
    assert any(SECRET in str(r.exc_info and r.exc_info[1]) for r in caplog.records)
